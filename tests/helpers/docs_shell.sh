# Sourced before every sh block of README.md and docs/*.md (see tests/test_docs.py): the
# shell a reader has, with bounds a test needs. Commands that run until stopped get a
# bound; servers get the free loopback port $DOCS_PORT; curl fails on an HTTP error and
# waits for a server that is still starting.

_docs_wait_http() {
  command curl -sS --fail --retry 30 --retry-connrefused --retry-delay 1 -o /dev/null \
    "http://127.0.0.1:$DOCS_PORT/health"
}

_docs_mcp_answers() {  # an MCP client's first request over stdio; the server must answer it
  local hello='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"docs","version":"0"}}}'
  local out
  out=$(mktemp)
  # stdin stays open until the server has answered (or 60 s have passed), then closes
  (printf '%s\n' "$hello"; for _ in $(seq 300); do [ -s "$out" ] && break; sleep 0.1; done) |
    timeout -k 2 60 trove "$@" >"$out" || true
  grep -q '"serverInfo"' "$out" || { echo "no MCP answer from: trove $*" >&2; return 1; }
}

trove() {
  case " $* " in
    *" watch "* | *" --follow "*)
      timeout -k 2 "${DOCS_BOUND:-3}" trove "$@" || [ $? = 124 ] ;;
    *" serve "*)
      if [ "${DOCS_SERVE:-}" = check ]; then  # a server in the foreground: up, answering, stopped
        command trove "$@" --port "$DOCS_PORT" &
        local pid=$!
        _docs_wait_http
        kill "$pid"
        wait "$pid" || true
      else
        command trove "$@" --port "$DOCS_PORT"
      fi ;;
    *" mcp "*)
      _docs_mcp_answers "$@" ;;
    *)
      command trove "$@" ;;
  esac
}

curl() {
  case " $* " in
    *" -N "*)
      timeout -k 2 "${DOCS_BOUND:-3}" curl "$@" || [ $? = 124 ] ;;
    *)
      command curl --fail-with-body --retry 30 --retry-connrefused --retry-delay 1 "$@" ;;
  esac
}
