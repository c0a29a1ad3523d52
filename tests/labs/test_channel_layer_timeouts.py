"""The channel layer's Redis connections outwait its blocking pop, so an idle WebSocket viewer is not torn down."""

from __future__ import annotations

import asyncio

from channels.layers import get_channel_layer


def test_the_socket_timeout_is_longer_than_the_blocking_pop():
    layer = get_channel_layer()
    connection = layer.create_pool(0).make_connection()
    # redis-py 8's default (5 s) equals channels_redis's BZPOPMIN wait: receive() would raise TimeoutError
    assert connection.socket_timeout is None or connection.socket_timeout > layer.brpop_timeout + 1


def test_a_message_sent_after_a_pause_is_received():
    layer = get_channel_layer()

    async def round_trip() -> dict:
        channel = await layer.new_channel()

        async def send_later() -> None:
            await asyncio.sleep(0.3)
            await layer.send(channel, {"type": "event", "n": 1})

        sender = asyncio.create_task(send_later())
        message = await asyncio.wait_for(layer.receive(channel), timeout=10)
        await sender
        return message

    assert asyncio.run(round_trip()) == {"type": "event", "n": 1}
