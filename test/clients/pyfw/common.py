"""What every framework runner shares: where the server and the store are (from the environment the test sets),
the calls each runner makes through its framework's own call path, and the JSON it prints for the test to read."""
import json
import os
import sys

BINARY = os.environ["STORE_MCP_BINARY"]
BUCKET = os.environ["PYFW_BUCKET"]
LOCAL_DIR = os.environ["PYFW_DIR"]
MODEL_URL = os.environ.get("PYFW_OPENAI_URL", "")
ANTHROPIC_URL = os.environ.get("PYFW_ANTHROPIC_URL", "")
HTTP_URL = os.environ.get("PYFW_HTTP_URL", "")
HTTP_TOKEN = os.environ.get("PYFW_HTTP_TOKEN", "")

# The server's environment: the store's variables only (never the runner's own).
SERVER_ENV = {k: v for k, v in os.environ.items() if k.startswith("STORE_") or k in ("PATH", "HOME")}
SERVER_ARGS = ["--allowed-dir", LOCAL_DIR]

# name -> (tool, arguments): what each runner calls directly, as its framework would.
CALLS = {
    "text": ("get_object", {"bucket_name": BUCKET, "object_key": "notes.txt"}),
    # Every optional parameter filled the way strict clients do: null, "" and defaults.
    "filled": ("get_object", {"bucket_name": BUCKET, "object_key": "notes.txt", "version_id": None, "mode": "read", "local_path": "", "max_content_size": None, "offset": 0, "overwrite": False, "include_binary": None}),
    "image": ("get_object", {"bucket_name": BUCKET, "object_key": "pixel.png"}),
    "binary": ("get_object", {"bucket_name": BUCKET, "object_key": "blob.bin"}),
    "binary_included": ("get_object", {"bucket_name": BUCKET, "object_key": "blob.bin", "include_binary": True}),
    "error": ("get_object", {"bucket_name": BUCKET, "object_key": "missing.txt"}),
    "usage": ("storage_usage", {"bucket_name": BUCKET}),
}


def emit(result):
    """The runner's one line of output for the test: JSON (whatever could not be encoded, as its repr)."""
    sys.stdout.write(json.dumps(result, default=repr) + "\n")
    sys.stdout.flush()


def shown(value, limit=4000):
    """A result as the framework hands it on, made printable and bounded."""
    text = value if isinstance(value, str) else repr(value)
    return text[:limit]
