"""The loopback chat-completions server answers a streamed request as the official client reads
one (what verifiers' harness sends): the text or the tool calls arrive whole, usage when asked."""

from __future__ import annotations

import json

import openai

from servicegym.simulators.loopback import LoopbackServer, text_reply, tool_call_reply


def test_a_streamed_request_gets_server_sent_chunks_the_client_reassembles():
    replies = [text_reply("Hello there."), tool_call_reply([("get_weather", {"city": "Kunming"})])]
    with LoopbackServer(script=replies) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0, timeout=10)
        chunks = list(client.chat.completions.create(model=server.model, messages=[{"role": "user", "content": "hi"}],
                                                     stream=True, stream_options={"include_usage": True}))
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello there."
        assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 2
        chunks = list(client.chat.completions.create(model=server.model, messages=[{"role": "user", "content": "hi"}],
                                                     stream=True))
        (call,) = [t for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or []]
        assert call.index == 0 and call.function.name == "get_weather"
        assert json.loads(call.function.arguments) == {"city": "Kunming"}
        assert all(c.usage is None for c in chunks)  # not asked for
        # a plain request is answered as before
        plain = client.chat.completions.create(model=server.model, messages=[{"role": "user", "content": "hi"}])
        assert plain.choices[0].message.content == "OK"
