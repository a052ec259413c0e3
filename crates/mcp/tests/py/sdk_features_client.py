"""The official MCP Python SDK as a client of an Actuator server's resources, prompts,
completions, logging, sampling and elicitation (the conformance fixture server), writing
what it saw as JSON.

It prints "subscribed" on stdout once subscribed to test://watched-resource, then waits (at
most 10 s) for the server's notifications/resources/updated, which the test sends.

Usage: python sdk_features_client.py OUT.json URL
"""

import json
import sys

import anyio
import httpx2 as httpx
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client


def texts(result) -> list:
    return [getattr(c, "text", None) for c in result.content]


async def main() -> None:
    out, url = sys.argv[1], sys.argv[2]
    seen: dict = {}
    logs: list = []
    updated = anyio.Event()
    answers = {"elicitation": None}

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append([params.level, params.data])

    async def on_sampling(context, params: types.CreateMessageRequestParams):
        asked = params.messages[0].content.text
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"echo {asked}"),
            model="python-scripted",
            stop_reason="endTurn",
        )

    async def on_elicitation(context, params):
        return types.ElicitResult(action="accept", content=answers["elicitation"])

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            seen["updated"] = message.params.uri
            updated.set()

    async with httpx.AsyncClient(timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(
                read,
                write,
                sampling_callback=on_sampling,
                elicitation_callback=on_elicitation,
                logging_callback=on_log,
                message_handler=on_message,
            ) as session:
                await session.initialize()
                listed = await session.list_resources()
                seen["resources"] = sorted(str(r.uri) for r in listed.resources)
                templates = await session.list_resource_templates()
                seen["templates"] = [t.uri_template for t in templates.resource_templates]
                text = await session.read_resource("test://static-text")
                seen["static_text"] = text.contents[0].text
                templated = await session.read_resource("test://template/7/data")
                seen["templated"] = json.loads(templated.contents[0].text)
                try:
                    await session.read_resource("test://nowhere")
                    seen["missing"] = "read"
                except Exception as e:  # the server's JSON-RPC error
                    seen["missing"] = str(e)

                prompts = await session.list_prompts()
                seen["prompts"] = sorted(p.name for p in prompts.prompts)
                got = await session.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
                seen["prompt"] = got.messages[0].content.text
                try:
                    await session.get_prompt("test_prompt_with_arguments", {"arg1": "a"})
                    seen["prompt_missing_arg"] = "got"
                except Exception as e:
                    seen["prompt_missing_arg"] = str(e)
                completed = await session.complete(
                    types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                    {"name": "arg1", "value": "par"},
                )
                seen["completion"] = completed.completion.values

                # Logging honours the level: nothing at warning, all three at debug.
                await session.set_logging_level("warning")
                await session.call_tool("test_tool_with_logging", {})
                await anyio.sleep(0.3)
                seen["logs_at_warning"] = len(logs)
                await session.set_logging_level("debug")
                await session.call_tool("test_tool_with_logging", {})
                await anyio.sleep(0.3)
                seen["logs_at_debug"] = [entry[1] for entry in logs]

                sampled = await session.call_tool("test_sampling", {"prompt": "hello"})
                seen["sampling"] = texts(sampled)

                answers["elicitation"] = {"username": "ada", "email": "ada@example.com"}
                good = await session.call_tool("test_elicitation", {"message": "Who are you?"})
                seen["elicitation"] = texts(good)
                # A client that answers against the schema: the tool reads an error.
                answers["elicitation"] = {"username": 5}
                bad = await session.call_tool("test_elicitation", {"message": "Who are you?"})
                seen["elicitation_bad"] = {"is_error": bad.is_error, "text": texts(bad)}

                await session.subscribe_resource("test://watched-resource")
                print("subscribed", flush=True)
                with anyio.move_on_after(10):
                    await updated.wait()
                seen.setdefault("updated", None)
    with open(out, "w") as f:
        json.dump(seen, f)


anyio.run(main)
