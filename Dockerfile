# One image for the web app and the workers; GPU workers run it on a host with the NVIDIA container toolkit.
FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap nodejs npm && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements/ requirements/
RUN pip install --no-cache-dir -r requirements/base.txt
COPY . .
# the sandboxed job child may write nothing here: without the bytecode, each child compiled the modules it imports
RUN python -m compileall -q gpu_worker
RUN cd frontend && npm ci --no-audit --no-fund && npm run build && cd .. \
 && DEBUG=1 python manage.py collectstatic --noinput -v0
ENV PYTHONUNBUFFERED=1
EXPOSE 8000
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "labsite.asgi:application"]
