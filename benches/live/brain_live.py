#!/usr/bin/env python3
"""What one job adds to the Brain's context, measured with the real Claude Code (Python stdlib only).

    benches/live/brain_live.py [--butler target/debug/butler] [--claude PATH] [--show] [--keep]

The job: resume after compaction, see the state, save it as a record, share it, see the state
again, on the 200-file project with a 20-file change that `benches/brain_bytes.rs` builds.
Claude Code (`claude -p`, default `/tmp/agents/cc/node_modules/.bin/claude`, see
`../shared/agents/install.sh claude`) talks to a scripted stand-in for the Anthropic Messages API
started here, which plays the job as tool calls and keeps every request body. Four sessions,
each on a freshly built identical project at the same path, with the same prompt:

- baseline: no tool call at all (the model answers at once);
- raw git, through Bash: `git status`, `git log --oneline -5`, `git commit -am MSG`, `git push`,
  `git status` -- the same job as Butler's: the changed files' names, the recent records, save, share,
  the state again; neither side reads the diff;
- raw git reading the diff too (`git diff` after the first `git status`): the heavier job the figures
  of the round before compared with, kept to compare with them;
- Butler (`butler mcp` as the only MCP server): ToolSearch `select:` of the four tools, then
  `work_session_start`, `work_observe`, `work_record(message)`, `work_publish`, `work_observe`.

What a job adds = the size of its session's last request (the one that ends the job) minus the
size of the baseline's first request. Sizes are the request body as compact JSON with strings
counted as they are (unescaped UTF-8), so the JSON escaping of a tool result's quotes and
newlines is not counted; bytes/4 is the rough token count. The Butler side is broken down by
request: the first request (instructions, deferred tool names), then what each turn added (the
model's tool_use block and the result Claude Code sent back, plus any schema loaded).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MESSAGE = "Refine the step functions and add `added` to twenty modules"
PROMPT = "Resume: see where the work stands, save it as a record, share it, then check the state."
LOADED = ["work_session_start", "work_observe", "work_record", "work_publish"]
DATE = "1700000000 +0000"


def raw_git_job(diff=False):
    cmds = ["git status", "git log --oneline -5", "git commit -am '%s'" % MESSAGE, "git push", "git status"]
    if diff:
        cmds.insert(1, "git diff")
    return [{"name": "Bash", "input": {"command": c}} for c in cmds]


def butler_job():
    select = "select:" + ",".join("mcp__butler__" + t for t in LOADED)
    return [
        {"name": "ToolSearch", "input": {"query": select, "max_results": len(LOADED)}},
        {"name": "mcp__butler__work_session_start", "input": {"project_root": "$CWD"}},
        {"name": "mcp__butler__work_observe", "input": {}},
        {"name": "mcp__butler__work_record", "input": {"message": MESSAGE}},
        {"name": "mcp__butler__work_publish", "input": {}},
        {"name": "mcp__butler__work_observe", "input": {}},
    ]


# --- the scripted model ---------------------------------------------------------------------------

class Model:
    """The turns of one session and the main requests it received."""

    def __init__(self, turns):
        self.turns = turns
        self.requests = []
        self.played = []
        self.lock = threading.Lock()


ID_RE = re.compile(r"^toolu_01(\d{3})\d")


def tool_id(turn):
    # As long as a real one (toolu_01 and 22 more characters).
    return "toolu_01%03d0%s" % (turn, uuid.uuid4().hex[:18])


def next_turn(body):
    top = -1
    for m in body.get("messages") or []:
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    mm = ID_RE.match(str(b.get("id", "")))
                    if mm:
                        top = max(top, int(mm.group(1)))
    return top + 1


def working_dir(body):
    m = re.search(r"Primary working directory: ([^\s\"\\]+)", json.dumps(body.get("messages", [])) + json.dumps(body.get("system", "")))
    return m.group(1) if m else None


def loaded(body):
    """Whether the job's Butler tools are listed whole (not deferred behind tool search)."""
    whole = {t.get("name") for t in body.get("tools") or [] if not t.get("defer_loading")}
    return all("mcp__butler__" + t in whole for t in LOADED)


def handler(model):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def reply_json(self, obj):
            data = json.dumps(obj).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_HEAD(self):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {}
            path = self.path.split("?")[0].rstrip("/")
            if path.endswith("/count_tokens"):
                return self.reply_json({"input_tokens": max(1, len(raw) // 4)})
            main = bool(body.get("tools")) and body.get("max_tokens") != 1
            if main:
                with model.lock:
                    model.requests.append(body)
                turn = next_turn(body)
                if turn < len(model.turns) and model.turns[turn]["name"] == "ToolSearch" and loaded(body):
                    turn += 1  # the tools are listed whole: nothing to search for
                blocks, stop = [], "end_turn"
                if turn < len(model.turns):
                    u = model.turns[turn]
                    cwd = working_dir(body) or ""
                    inp = json.loads(json.dumps(u["input"]).replace("$CWD", cwd))
                    blocks = [{"type": "tool_use", "id": tool_id(turn), "name": u["name"], "input": inp}]
                    stop = "tool_use"
                    with model.lock:
                        model.played.append(u)
                else:
                    blocks = [{"type": "text", "text": "Done."}]
            else:
                blocks, stop = [{"type": "text", "text": "OK."}], "end_turn"
            if not body.get("stream"):
                return self.reply_json({"id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant",
                                        "model": body.get("model", "m"), "content": blocks, "stop_reason": stop,
                                        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def sse(event, obj):
                data = ("event: %s\ndata: %s\n\n" % (event, json.dumps(obj))).encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

            sse("message_start", {"type": "message_start", "message": {
                "id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant",
                "model": body.get("model", "m"), "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1}}})
            for i, b in enumerate(blocks):
                if b["type"] == "text":
                    sse("content_block_start", {"type": "content_block_start", "index": i,
                                                "content_block": {"type": "text", "text": ""}})
                    sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                "delta": {"type": "text_delta", "text": b["text"]}})
                else:
                    sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                        "type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}})
                    sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                        "type": "input_json_delta", "partial_json": json.dumps(b["input"])}})
                sse("content_block_stop", {"type": "content_block_stop", "index": i})
            sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 1}})
            sse("message_stop", {"type": "message_stop"})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return H


# --- the project ----------------------------------------------------------------------------------

def git(env, cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)


def project(root, env):
    """brain_bytes' project: 200 files, six commits, published, then a 20-file change."""
    if os.path.exists(root):
        shutil.rmtree(root)
    d = os.path.join(root, "project")
    shared = os.path.join(root, "shared.git")
    os.makedirs(os.path.join(d, "src"))
    git(env, root, "init", "-q", "--bare", "-b", "main", shared)
    git(env, d, "init", "-q", "-b", "main")
    for i in range(200):
        with open(os.path.join(d, "src/m%03d.rs" % i), "w") as f:
            f.write("".join("fn f%d_%d() -> u32 { %d }\n" % (i, l, l) for l in range(40)))
    for k in range(6):
        git(env, d, "add", "-A")
        git(env, d, "commit", "-q", "--allow-empty", "-m", "Step %d: refine modules" % k)
    git(env, d, "remote", "add", "origin", shared)
    git(env, d, "push", "-q", "-u", "origin", "main")
    for i in range(20):
        p = os.path.join(d, "src/m%03d.rs" % (i * 3))
        text = open(p).read()
        for l in (3, 17, 29):
            text = text.replace("{ %d }" % l, "{ %d + 1 }" % l, 1)
        text += "\npub fn added(values: &[u32]) -> u32 {\n"
        text += "".join("    let _step%d = values.len() as u32 + %d;\n" % (k, k) for k in range(10))
        text += "}\n"
        with open(p, "w") as f:
            f.write(text)
    return d


# --- a session ------------------------------------------------------------------------------------

def session(work, claude, turns, butler=None):
    """Runs Claude Code once on a fresh project; returns the main request bodies in order."""
    home = os.path.join(work, "home")
    if os.path.exists(home):
        shutil.rmtree(home)
    os.makedirs(home)
    with open(os.path.join(home, ".gitconfig"), "w") as f:
        f.write("[user]\n\tname = Butler Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "LANG": "C.UTF-8",
           "GIT_AUTHOR_DATE": DATE, "GIT_COMMITTER_DATE": DATE}
    d = project(os.path.join(work, "job"), env)
    for k in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        del env[k]
    model = Model(turns)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler(model))
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    cfg = os.path.join(work, "mcp.json")
    servers = {}
    if butler:
        servers["butler"] = {"command": butler, "args": ["mcp"], "env": {"BUTLER_ISSUE_BACKEND": "local"}}
    with open(cfg, "w") as f:
        json.dump({"mcpServers": servers}, f)
    env.update({"ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % srv.server_address[1],
                "ANTHROPIC_API_KEY": "bench", "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    if os.environ.get("BUTLER_LANG"):
        env["BUTLER_LANG"] = os.environ["BUTLER_LANG"]
    cmd = [claude, "-p", PROMPT, "--mcp-config", cfg, "--strict-mcp-config",
           "--allowedTools", "Bash,ToolSearch,mcp__butler"]
    out = subprocess.run(cmd, cwd=d, env=env, capture_output=True, text=True, timeout=600)
    srv.shutdown()
    if out.returncode != 0:
        sys.exit("claude failed (%d): %s%s" % (out.returncode, out.stdout, out.stderr))
    if len(model.requests) != len(model.played) + 1 or len(model.played) < len(turns) - 1:
        sys.exit("expected a request per turn, got %d for %d" % (len(model.requests), len(model.played)))
    return model.requests, model.played


# --- counting -------------------------------------------------------------------------------------

def size(v):
    """Compact JSON length with strings as they are (UTF-8, unescaped)."""
    if isinstance(v, str):
        return len(v.encode()) + 2
    if isinstance(v, dict):
        return 2 + sum(size(k) + 1 + size(x) for k, x in v.items()) + max(0, len(v) - 1)
    if isinstance(v, list):
        return 2 + sum(size(x) for x in v) + max(0, len(v) - 1)
    return len(json.dumps(v))


def last_blocks(body):
    """The last assistant message's blocks and the user message that answers them."""
    msgs = body["messages"]
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i]["role"] == "assistant":
            return msgs[i:]
    return []


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--butler", default="target/debug/butler")
    p.add_argument("--claude", default="/tmp/agents/cc/node_modules/.bin/claude")
    p.add_argument("--show", action="store_true", help="print what each turn added")
    p.add_argument("--keep", action="store_true", help="keep the requests in ./brain_live.json")
    a = p.parse_args()
    butler = os.path.abspath(a.butler)
    work = tempfile.mkdtemp(prefix="brain-live-")
    try:
        base, _ = session(work, a.claude, [])
        raw, raw_turns = session(work, a.claude, raw_git_job())
        heavy, heavy_turns = session(work, a.claude, raw_git_job(diff=True))
        ours, our_turns = session(work, a.claude, butler_job(), butler)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if a.keep:
        with open("brain_live.json", "w") as f:
            json.dump({"baseline": base, "raw": raw, "raw_diff": heavy, "butler": ours}, f)
    b0 = size(base[0])

    def table(title, reqs, turns):
        print(title)
        print("  %-44s %7s %7s" % ("", "bytes", "bytes/4"))
        rows = [("first request", size(reqs[0]) - b0)]
        for k, t in enumerate(turns):
            label = t["name"].replace("mcp__butler__", "")
            if t["name"] == "Bash":
                label = "Bash " + t["input"]["command"][:30]
            rows.append((label, size(reqs[k + 1]) - size(reqs[k])))
            if a.show:
                print("----", label)
                print(json.dumps(last_blocks(reqs[k + 1]), ensure_ascii=False)[:4000])
        for label, n in rows:
            print("  %-44s %7d %7d" % (label, n, n // 4))
        total = size(reqs[-1]) - b0
        print("  %-44s %7d %7d" % ("total", total, total // 4))
        return total

    print("One job (resume, see, save, share, see), 200-file project, 20-file change, live Claude Code:")
    g = table("raw git (Bash)", raw, raw_turns)
    h = table("raw git reading the whole diff too (the job last round's figures compared with)", heavy, heavy_turns)
    b = table("Butler", ours, our_turns)
    print("Butler / raw git: %.2f of bytes; / raw git with git diff: %.2f" % (b / g, b / h))


if __name__ == "__main__":
    main()
