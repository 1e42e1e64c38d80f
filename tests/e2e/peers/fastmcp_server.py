"""A FastMCP server (the FastMCP built into Python mcp 1.x, `mcp.server.fastmcp`) for the interop
matrix (tests/e2e/matrix.py). Stdio by default; `FASTMCP_HTTP_PORT` set: Streamable HTTP on that port
(127.0.0.1, path /mcp), or with `FASTMCP_TRANSPORT=sse` the legacy HTTP+SSE transport (GET /sse,
POST /messages/). Every answer is deterministic so a direct session and one through Portcullis
can be compared.

Tools: say (text), weather (structured output), pixel (image), tone (audio), linked (resource link),
embedded (embedded resource), fail (isError). Resources: note://hello, a note://{name} template;
prompt: greet(name), with completion for `name`.
"""

import base64
import os

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.prompts.base import UserMessage
from mcp.types import (AudioContent, Completion, EmbeddedResource, ImageContent, ResourceLink,
                       TextResourceContents)
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
