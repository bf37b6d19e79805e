#!/usr/bin/env python3
"""Drives `liveproof mcp` with the official MCP Python SDK (PyPI `mcp`), over stdio.

    mcp_client.py BINARY KUBECONFIG --since TIME [--expect-verdict not_live] [--allow-writes]

Starts BINARY as an MCP server the way an agent's host does (stdio_client + ClientSession),
initializes, lists the tools, calls them against the cluster KUBECONFIG points at, and checks
every answer. Exits 0 when all checks hold, 1 on the first that does not (with what was seen),
2 when the SDK is not installed. Run by crates/liveproof/tests/mcp.rs.
"""

import argparse
import asyncio
import json
import sys

try:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
except ImportError as e:  # the Rust test turns this into a failure naming the fix
    print(f"the MCP Python SDK is not installed ({e}): pip install mcp", file=sys.stderr)
    sys.exit(2)

try:
    from mcp.shared.exceptions import MCPError
except ImportError:  # SDK 1.x
    from mcp.shared.exceptions import McpError as MCPError


class Failed(Exception):
    pass


def check(condition, what, seen=None):
    if not condition:
        raise Failed(f"{what}" + (f"\nseen: {seen}" if seen is not None else ""))
    print(f"ok: {what}")


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def session_checks(args):
    server = StdioServerParameters(
        command=args.binary,
        args=["mcp", "--kubeconfig", args.kubeconfig] + (["--allow-writes"] if args.allow_writes else []),
        # KUBECONFIG is deliberately not passed: the tools take `kubeconfig`.
        env={"NO_COLOR": "1"},
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await asyncio.wait_for(session.initialize(), 30)
            check(init.server_info.name == "liveproof", "serverInfo.name is liveproof", init.server_info)
            check(bool(init.server_info.version), "serverInfo.version is set", init.server_info)
            check(init.capabilities.tools is not None, "the server declares the tools capability", init.capabilities)
            print(f"negotiated protocol {init.protocol_version}")

            await session.send_ping()
            check(True, "ping answered")

            tools = {t.name: t for t in (await session.list_tools()).tools}
            for name in ("verify", "release_show", "stale"):
                check(name in tools, f"tools/list offers {name}", sorted(tools))
                check(tools[name].input_schema.get("type") == "object", f"{name} has an object inputSchema")
            if args.allow_writes:
                check("restart_stale" in tools, "--allow-writes offers restart_stale", sorted(tools))
            else:
                check("restart_stale" not in tools, "read-only: restart_stale is not offered", sorted(tools))
            check(tools["verify"].output_schema is not None, "verify declares an outputSchema")
            check(
                "show_values" not in tools["release_show"].input_schema.get("properties", {}),
                "release_show has no way to show values",
            )

            # The real verify, against the running simulator. The SDK validates
            # structuredContent against verify's outputSchema before returning it.
            result = await session.call_tool(
                "verify",
                {
                    "targets": ["apps/deploy/inventory"],
                    "kubeconfig": args.kubeconfig,
                    "since": args.since,
                    "no_registry": True,
                },
                read_timeout_seconds=120,
            )
            check(not result.is_error, "verify succeeds", text_of(result))
            report = result.structured_content
            check(isinstance(report, dict), "verify returns structured content", report)
            check(report.get("schema") == "liveproof/v1", "the structured result is a liveproof/v1 report", report)
            check(report.get("verdict") == args.expect_verdict, f"verdict is {args.expect_verdict}", report.get("verdict"))
            check(
                json.loads(text_of(result)) == report,
                "the text content carries the same JSON as the structured content",
            )
            target = report["targets"][0]
            check(
                (target["kind"], target["namespace"], target["name"]) == ("Deployment", "apps", "inventory"),
                "the report is about apps/Deployment/inventory",
                target,
            )
            check(
                any(e["check"] == "pod_restarted" for e in target["evidence"]),
                "the evidence includes pod_restarted",
                [e["check"] for e in target["evidence"]],
            )

            # A verify that waits reports its progress to the SDK's progress callback (the SDK
            # sends the progressToken), and still ends with the report at its timeout. It states
            # the change (the demo's new image): a wait for what can never be live is refused.
            if args.expect_verdict == "not_live":
                progress = []

                async def on_progress(done, total, message):
                    progress.append((done, message))

                waited = await session.call_tool(
                    "verify",
                    {
                        "targets": ["apps/deploy/inventory"],
                        "kubeconfig": args.kubeconfig,
                        "since": args.since,
                        "image": ["ghcr.io/acme/inventory:1.4.0"],
                        "no_registry": True,
                        "wait_seconds": 3,
                    },
                    read_timeout_seconds=120,
                    progress_callback=on_progress,
                )
                check(not waited.is_error, "a waiting verify succeeds", text_of(waited))
                check(
                    waited.structured_content.get("verdict") == "not_live",
                    "the wait ends with the last verdict",
                    waited.structured_content.get("verdict"),
                )
                check(len(progress) > 0, "progress reached the SDK's callback", progress)
                check(
                    any("Deployment apps/inventory" in (m or "") for _, m in progress),
                    "progress says what the wait waits for",
                    progress,
                )
                check(
                    all(a[0] < b[0] for a, b in zip(progress, progress[1:])),
                    "progress increases",
                    progress,
                )

            # Bad input: a tool error with the CLI's message; the server keeps serving.
            bad = await session.call_tool("verify", {"targets": ["pod/inventory"], "kubeconfig": args.kubeconfig})
            check(bad.is_error, "verify of an unknown target kind is an isError result", bad)
            check("pods are not targets" in text_of(bad), "it says what is wrong, as the CLI does", text_of(bad))
            bad = await session.call_tool(
                "verify", {"targets": ["apps/deploy/inventory"], "since": "yesterday", "kubeconfig": args.kubeconfig}
            )
            check(bad.is_error and "--since `yesterday`" in text_of(bad), "a bad time is an isError result", text_of(bad))
            # A version_url the operator did not allow (--allow-version-url) is refused unread:
            # nothing listens on loopback port 9, and nothing is sent there.
            refused = await session.call_tool(
                "verify",
                {
                    "targets": ["apps/deploy/inventory"],
                    "kubeconfig": args.kubeconfig,
                    "since": args.since,
                    "version_url": ["http://127.0.0.1:9/latest/meta-data/iam/security-credentials/"],
                    "expect_version": ["1.4.0"],
                },
            )
            check(
                refused.is_error and "--allow-version-url" in text_of(refused),
                "a version_url the operator did not allow is refused, saying how to allow it",
                text_of(refused),
            )
            bad = await session.call_tool("stale", {"targets": ["apps/release/inventory"], "kubeconfig": args.kubeconfig})
            check(bad.is_error and "deployment/" in text_of(bad), "stale of a non-workload is an isError result", text_of(bad))
            bad = await session.call_tool(
                "release_show", {"name": "no-such-release", "namespace": "apps", "kubeconfig": args.kubeconfig}
            )
            check(bad.is_error and "not found" in text_of(bad), "release_show of a missing release is an isError result", text_of(bad))

            shown = await session.call_tool(
                "release_show",
                {"name": "inventory", "namespace": "apps", "section": "values", "kubeconfig": args.kubeconfig},
            )
            check(not shown.is_error, "release_show of the story's release succeeds", text_of(shown))
            check("<redacted>" in text_of(shown), "release values are redacted over MCP", text_of(shown))

            try:
                await session.call_tool("no_such_tool", {})
                raise Failed("an unknown tool must be a JSON-RPC error")
            except MCPError as e:
                check(e.error.code == -32602, "an unknown tool is JSON-RPC error -32602", e.error)

            if args.allow_writes:
                # dry_run: the scope and the patches it would send, nothing sent.
                result = await session.call_tool(
                    "restart_stale",
                    {"targets": ["apps/deploy/inventory"], "kubeconfig": args.kubeconfig, "dry_run": True},
                    read_timeout_seconds=120,
                )
                check(not result.is_error, "restart_stale (dry run) succeeds", text_of(result))
                restart = result.structured_content.get("restart", {})
                check(restart.get("dry_run") is True, "restart_stale says it was a dry run", restart)
            else:
                denied = await session.call_tool("restart_stale", {"targets": ["apps/deploy/inventory"]})
                check(denied.is_error, "restart_stale without --allow-writes is refused", denied)
                check("--allow-writes" in text_of(denied), "the refusal says how to enable it", text_of(denied))

            # Still serving after all those errors.
            result = await session.call_tool(
                "stale", {"targets": ["apps/deploy/inventory"], "kubeconfig": args.kubeconfig}, read_timeout_seconds=120
            )
            check(not result.is_error, "stale succeeds after the errors", text_of(result))
            rows = result.structured_content
            check(rows.get("schema") == "liveproof/stale/v1", "stale returns the liveproof/stale/v1 rows", rows)
            await session.send_ping()
            check(True, "the server still answers ping")


def first_failed(e):
    """The check that failed, out of the exception groups the SDK's task groups wrap it in."""
    if isinstance(e, Failed):
        return e
    for inner in getattr(e, "exceptions", ()):
        found = first_failed(inner)
        if found is not None:
            return found
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("kubeconfig")
    parser.add_argument("--since", required=True)
    parser.add_argument("--expect-verdict", default="not_live")
    parser.add_argument("--allow-writes", action="store_true")
    args = parser.parse_args()
    try:
        asyncio.run(asyncio.wait_for(session_checks(args), 240))
    except BaseException as e:  # noqa: BLE001 - any failure fails the run, loudly
        failed = first_failed(e)
        if failed is None:
            import traceback

            traceback.print_exc()
            print(f"FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        else:
            print(f"FAILED: {failed}", file=sys.stderr)
        sys.exit(1)
    print("all MCP checks passed")


if __name__ == "__main__":
    main()
