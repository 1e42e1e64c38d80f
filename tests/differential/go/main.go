// A minimal stdio MCP server on Go's encoding/json, for the differential tests (tests/differential).
//
// One JSON-RPC message per line on stdin. The envelope and the tools/call params are decoded into
// structs the way Go programs usually do it, so encoding/json's reading shows: struct fields match
// keys case-insensitively (with Unicode folding of 'ſ' to 's' and the Kelvin sign to 'k'), the last
// matching key wins, a null id leaves ID nil. Every tool execution is appended to $DIFF_EXEC_LOG as
// {"stack","tool","arguments","request"}, written before the answer; every line received is
// appended as it came to $DIFF_SEEN_LOG (what the gateway forwarded).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

type envelope struct {
	JSONRPC string
	ID      *json.RawMessage
	Method  string
	Params  json.RawMessage
}

type callParams struct {
	Name      string
	Arguments map[string]any
}

// rawArguments re-reads params for the typed per-tool structs.
type rawArguments struct {
	Arguments json.RawMessage
}

type readFileArgs struct {
	Path string
}

type echoArgs struct {
	Message string
}

var logFile, seenFile *os.File

func logExec(tool string, arguments any, line []byte) {
	rec := map[string]any{"stack": "go", "tool": tool, "arguments": arguments, "request": string(line)}
	b, _ := json.Marshal(rec)
	if logFile != nil {
		logFile.Write(append(b, '\n'))
	}
}

func reply(out *bufio.Writer, id *json.RawMessage, result any, rpcErr map[string]any) {
	if id == nil {
		return // a notification as Go reads it: executed, never answered
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rpcErr != nil {
		msg["error"] = rpcErr
	} else {
		msg["result"] = result
	}
	b, _ := json.Marshal(msg)
	out.Write(append(b, '\n'))
	out.Flush()
}

func text(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}

func tools() []any {
	obj := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	str := map[string]any{"type": "string"}
	return []any{
		map[string]any{"name": "echo", "description": "Echoes message", "inputSchema": obj(map[string]any{"message": str})},
		map[string]any{"name": "read_file", "description": "Reads path", "inputSchema": obj(map[string]any{"path": str})},
		map[string]any{"name": "wipe", "description": "Wipes target", "inputSchema": obj(map[string]any{"target": str})},
	}
}

func handle(out *bufio.Writer, line []byte) {
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		null := json.RawMessage("null")
		reply(out, &null, nil, map[string]any{"code": -32700, "message": err.Error()})
		return
	}
	switch env.Method {
	case "initialize":
		var p struct{ ProtocolVersion string }
		json.Unmarshal(env.Params, &p)
		reply(out, env.ID, map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "differential-go", "version": "1"},
		}, nil)
	case "notifications/initialized", "notifications/cancelled":
	case "ping":
		reply(out, env.ID, map[string]any{}, nil)
	case "tools/list":
		reply(out, env.ID, map[string]any{"tools": tools()}, nil)
	case "tools/call":
		var p callParams
		if err := json.Unmarshal(env.Params, &p); err != nil {
			reply(out, env.ID, nil, map[string]any{"code": -32602, "message": err.Error()})
			return
		}
		var raw rawArguments
		json.Unmarshal(env.Params, &raw)
		switch p.Name {
		case "echo":
			var a echoArgs
			json.Unmarshal(raw.Arguments, &a)
			logExec("echo", p.Arguments, line)
			reply(out, env.ID, text("Echo: "+a.Message), nil)
		case "read_file":
			// What the tool opens is the typed struct's Path, whatever the map holds.
			var a readFileArgs
			json.Unmarshal(raw.Arguments, &a)
			logExec("read_file", map[string]any{"path": a.Path}, line)
			reply(out, env.ID, text("read "+a.Path), nil)
		case "wipe":
			logExec("wipe", p.Arguments, line)
			reply(out, env.ID, text("wiped"), nil)
		default:
			reply(out, env.ID, nil, map[string]any{"code": -32602, "message": fmt.Sprintf("unknown tool %q", p.Name)})
		}
	default:
		reply(out, env.ID, nil, map[string]any{"code": -32601, "message": "method not found: " + env.Method})
	}
}

func main() {
	if path := os.Getenv("DIFF_EXEC_LOG"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		logFile = f
	}
	if path := os.Getenv("DIFF_SEEN_LOG"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		seenFile = f
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] == '\n' {
				line = line[:len(line)-1]
			}
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			if len(line) > 0 {
				if seenFile != nil {
					seenFile.Write(append(append([]byte{}, line...), '\n'))
				}
				handle(out, line)
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
	}
}
