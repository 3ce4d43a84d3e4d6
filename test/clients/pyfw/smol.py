"""smolagents 1.26 with mcpadapt 0.1.20: the tools as smolagents sees them (mcpadapt hands it only the parameters'
properties, so an input is required unless it says nullable), each call through smolagents' own argument check and
the tool's forward, and a ToolCallingAgent run to the end against the stand-in model."""
import logging
import sys

from common import BINARY, BUCKET, CALLS, HTTP_TOKEN, HTTP_URL, MODEL_URL, SERVER_ARGS, SERVER_ENV, emit, shown
from mcp import StdioServerParameters
from smolagents import OpenAIServerModel, ToolCallingAgent, ToolCollection
from smolagents.tools import validate_tool_arguments

logging.disable(logging.WARNING)


def calls_through(tools):
    calls = {}
    for label, (name, args) in CALLS.items():
        given = {k: v for k, v in args.items() if v is not None}
        try:
            # What the agent checks before it calls a tool: every input it is not told is nullable must be there.
            validate_tool_arguments(tools[name], given)
            calls[label] = {"ok": True, "value": shown(tools[name](**given))}
        except Exception as err:  # the framework's own refusal is what the test looks at
            calls[label] = {"ok": False, "error": shown(str(err), 600)}
    return calls


out = {"framework": "smolagents"}
params = StdioServerParameters(command=BINARY, args=SERVER_ARGS, env=SERVER_ENV)
with ToolCollection.from_mcp(params, trust_remote_code=True) as collection:
    tools = {t.name: t for t in collection.tools}
    out["tools"] = sorted(tools)
    out["calls"] = calls_through(tools)
    # What smolagents requires of each tool: every input not marked nullable (it never sees the schema's required list).
    out["required"] = {name: sorted(k for k, v in t.inputs.items() if not v.get("nullable")) for name, t in tools.items()}
    if MODEL_URL:
        model = OpenAIServerModel(model_id="gpt-stand-in", api_base=MODEL_URL, api_key="stand-in")
        agent = ToolCallingAgent(tools=list(tools.values()), model=model, max_steps=4, verbosity_level=0)
        try:
            out["agent"] = {"ok": True, "answer": shown(agent.run(f"What does notes.txt in {BUCKET} say?"))}
        except Exception as err:
            out["agent"] = {"ok": False, "error": shown(str(err), 600)}
if HTTP_URL:
    server = {"url": HTTP_URL, "transport": "streamable-http", "headers": {"Authorization": f"Bearer {HTTP_TOKEN}"}}
    with ToolCollection.from_mcp(server, trust_remote_code=True) as collection:
        tools = {t.name: t for t in collection.tools}
        out["http"] = {"tools": sorted(tools), "calls": calls_through(tools)}
emit(out)
