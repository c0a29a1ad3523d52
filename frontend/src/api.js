/**
 * The JSON endpoints: submit, list and fetch submissions; keep a draft. Every call is
 * same-origin with the CSRF header; errors come back as {ok: false, error}.
 */

import { parseJsonLenient } from "./events.js";

const KEEPALIVE_BYTES = 60 * 1024;

async function readBody(resp) {
  const text = await resp.text();
  if (!text) return {};
  try {
    return parseJsonLenient(text);
  } catch (_err) {
    return { error: `Unexpected reply from the server (HTTP ${resp.status}).` };
  }
}

async function request(url, options = {}) {
  let resp;
  try {
    resp = await fetch(url, { credentials: "same-origin", ...options });
  } catch (_err) {
    return { ok: false, status: 0, body: {}, error: "Could not reach the server. Check your connection and try again." };
  }
  const body = await readBody(resp);
  if (!resp.ok) {
    const error = (body && typeof body.error === "string" && body.error) || `Request failed (HTTP ${resp.status}).`;
    return { ok: false, status: resp.status, body, error };
  }
  return { ok: true, status: resp.status, body };
}

export function csrfFromCookie() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

export class Api {
  constructor(config) {
    this.config = config;
  }

  submit({ exercise, language, source, blockSize, sweep }) {
    return request(this.config.submit_url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        "X-CSRFToken": this.config.csrf_token || csrfFromCookie(),
      },
      body: JSON.stringify({
        exercise,
        language,
        source,
        ...(Number.isInteger(blockSize) ? { block_size: blockSize } : {}),
        ...(sweep ? { sweep: true } : {}),
      }),
    });
  }

  history() {
    return request(this.config.submissions_url, { headers: { Accept: "application/json" } });
  }

  /** GET /api/submissions/<id>: the detail URL is the submit URL plus the id. */
  detailUrl(id) {
    return `${this.config.submit_url.replace(/\/+$/, "")}/${encodeURIComponent(id)}`;
  }

  /** POST /api/submissions/<id>/profile: ask the profile lane for the run's Nsight Compute report. */
  profile(id) {
    return request(`${this.detailUrl(id)}/profile`, {
      method: "POST",
      headers: { Accept: "application/json", "X-CSRFToken": this.config.csrf_token || csrfFromCookie() },
    });
  }

  submission(id) {
    return request(this.detailUrl(id), { headers: { Accept: "application/json" } });
  }

  /** PUT /api/drafts: the editor's text as the learner's draft; `keepalive` lets it outlive the page. */
  saveDraft({ exercise, language, source }) {
    const body = JSON.stringify({ exercise, language, source });
    return request(this.config.drafts_url, {
      method: "PUT",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        "X-CSRFToken": this.config.csrf_token || csrfFromCookie(),
      },
      body,
      keepalive: body.length < KEEPALIVE_BYTES, // the browser refuses a bigger keepalive body
    });
  }
}
