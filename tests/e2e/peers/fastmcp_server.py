"""A FastMCP server (the FastMCP built into Python mcp 1.x, `mcp.server.fastmcp`) for the interop
matrix (tests/e2e/matrix.py). Stdio by default; `FASTMCP_HTTP_PORT` set: Streamable HTTP on that port
(127.0.0.1, path /mcp), or with `FASTMCP_TRANSPORT=sse` the legacy HTTP+SSE transport (GET /sse,
POST /messages/). Every answer is deterministic so a direct session and one through Portcullis
can be compared.

Tools: say (text), weather (structured output), pixel (image), tone (audio), linked (resource link),
embedded (embedded resource), fail (isError), chatty (log messages at three levels during the call),
announce (tools/resources list_changed and resources/updated for note://hello during the call; the lists
themselves never change, so sessions stay comparable), slow (progress, then waits; a cancel is recorded
under its marker), was_cancelled (waits up to 5 s for that record). Resources: note://hello, a note://{name} template;
prompt: greet(name), with completion for `name`.
"""

import base64
import os

import anyio

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.prompts.base import UserMessage
from mcp.types import (AudioContent, Completion, EmbeddedResource, ImageContent, ResourceLink,
                       ResourceListChangedNotification, ResourceUpdatedNotification,
                       ResourceUpdatedNotificationParams, ServerNotification, TextResourceContents,
                       ToolListChangedNotification)
from pydantic import BaseModel

port = os.environ.get("FASTMCP_HTTP_PORT")
mcp = FastMCP("matrix-fastmcp", host="127.0.0.1", port=int(port or 0) or 8000)

PIXEL = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2f0d8"
    "1c0000000049454e44ae426082")).decode()


class Weather(BaseModel):
    city: str
    celsius: int


@mcp.tool()
def say(text: str) -> str:
    """Say the text back."""
    return f"said: {text}"


@mcp.tool()
def weather(city: str) -> Weather:
    """A structured answer."""
    return Weather(city=city, celsius=21)


@mcp.tool()
def pixel() -> ImageContent:
    """A 1x1 PNG."""
    return ImageContent(type="image", data=PIXEL, mimeType="image/png")


@mcp.tool()
def tone() -> AudioContent:
    """A few bytes of audio."""
    return AudioContent(type="audio", data=base64.b64encode(b"RIFF0000WAVE").decode(), mimeType="audio/wav")


@mcp.tool()
def linked() -> ResourceLink:
    """A link to a resource."""
    return ResourceLink(type="resource_link", uri="note://hello", name="hello", mimeType="text/plain")


@mcp.tool()
def embedded() -> EmbeddedResource:
    """An embedded resource."""
    return EmbeddedResource(type="resource", resource=TextResourceContents(
        uri="note://embedded", mimeType="text/plain", text="inside"))


@mcp.tool()
def fail(why: str) -> str:
    """Always a tool error."""
    raise ValueError(f"failed on purpose: {why}")


@mcp.tool()
async def chatty(marker: str, ctx: Context) -> str:
    """Log at debug, info and warning, then answer."""
    await ctx.debug(f"debug {marker}")
    await ctx.info(f"info {marker}")
    await ctx.warning(f"warning {marker}")
    return f"chatted: {marker}"


@mcp.tool()
async def announce(ctx: Context) -> str:
    """Send list_changed for tools and resources and resources/updated for note://hello, on this call's stream."""
    for note in (ToolListChangedNotification(), ResourceListChangedNotification(),
                 ResourceUpdatedNotification(params=ResourceUpdatedNotificationParams(uri="note://hello"))):
        await ctx.session.send_notification(ServerNotification(note), related_request_id=ctx.request_id)
    return "announced"


# marker -> set once slow(marker) was cancelled (one process may serve many sessions over HTTP).
_cancelled: dict[str, anyio.Event] = {}


def _cancel_event(marker: str) -> anyio.Event:
    return _cancelled.setdefault(marker, anyio.Event())


@mcp.tool()
async def slow(marker: str, ctx: Context) -> str:
    """Report progress 0/1, then wait up to 30 s; a cancellation is recorded under `marker`."""
    await ctx.report_progress(0, 1)
    try:
        await anyio.sleep(30)
    except anyio.get_cancelled_exc_class():
        _cancel_event(marker).set()
        raise
    return f"slow {marker} ran to the end"


@mcp.tool()
async def was_cancelled(marker: str) -> bool:
    """Whether slow(marker) was cancelled, waiting up to 5 s for it."""
    with anyio.move_on_after(5):
        await _cancel_event(marker).wait()
    return _cancel_event(marker).is_set()


@mcp.resource("note://hello")
def hello() -> str:
    return "hello note"


@mcp.resource("note://{name}")
def note(name: str) -> str:
    return f"note {name}"


@mcp.prompt()
def greet(name: str) -> list:
    return [UserMessage(f"Greet {name} warmly.")]


@mcp.completion()
async def complete(ref, argument, context):
    names = ["Ada", "Alan", "Grace"]
    return Completion(values=[n for n in names if n.startswith(argument.value)])


if __name__ == "__main__":
    mcp.run(os.environ.get("FASTMCP_TRANSPORT", "streamable-http") if port else "stdio")
