"""Messages between the engine and the child survive any chunking, and malformed ones are refused."""

from __future__ import annotations

import os

import numpy as np
import pytest

from gpu_worker.isolation.wire import MessageReader, MessageWriter, WireError


def written(*messages) -> bytes:
    read_fd, write_fd = os.pipe()
    writer = MessageWriter(write_fd)
    for message, arrays in messages:
        writer.send(message, arrays)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        return pipe.read()


def test_a_message_with_arrays_comes_back_whole_however_the_bytes_are_split():
    c = np.arange(1000, dtype=np.float32)
    k = np.arange(6, dtype=np.int64).reshape(2, 3)
    data = written(({"type": "outputs", "index": 0}, {"c": c, "k": k}), ({"type": "finished"}, None))
    reader = MessageReader(1 << 20)
    messages = []
    for i in range(0, len(data), 7):
        messages += reader.feed(data[i : i + 7])
    assert [m["type"] for m in messages] == ["outputs", "finished"]
    assert np.array_equal(messages[0]["data"]["c"], c) and np.array_equal(messages[0]["data"]["k"], k)


@pytest.mark.parametrize(
    "line",
    [
        b"not json\n",
        b'{"no": "type"}\n',
        b'{"type": "outputs", "arrays": [{"name": "c", "dtype": "object", "shape": [1], "nbytes": 8}]}\n',
        b'{"type": "outputs", "arrays": [{"name": "c", "dtype": "float32", "shape": [4], "nbytes": 1}]}\n',
        b'{"type": "outputs", "arrays": [{"name": "c", "dtype": "float32", "shape": [-1], "nbytes": -4}]}\n',
    ],
)
def test_a_malformed_message_is_refused(line):
    with pytest.raises(WireError):
        MessageReader(1 << 20).feed(line)


def test_a_child_cannot_make_the_engine_hold_more_than_its_limit():
    reader = MessageReader(1000)
    with pytest.raises(WireError, match="more than 1000 bytes"):
        reader.feed(b'{"type": "x", "arrays": [{"name": "c", "dtype": "uint8", "shape": [5000], "nbytes": 5000}]}\n')
        reader.feed(b"\0" * 5000)
