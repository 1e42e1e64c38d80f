// A stdio MCP server on Go's encoding/json alone that logs what each tool received as its typed
// struct, for tests/e2e/mcp1/test_readings_mcp1.py (the semantic layer of tests/differential).
//
// Arguments are decoded into typed structs as Go servers do (the official go-sdk also unmarshals a
// tool's input with encoding/json into the handler's struct), so Go's reading shows: keys match
// fields case-insensitively ("FORCE" sets Force; 'ſ' folds to 's', the Kelvin sign to 'k'), the last
// matching key wins, and a JSON number decoded into a float64 is rounded beyond 2^53. Every execution
// is appended to $READINGS_LOG as {"stack","tool","marker","value"} before the answer.
//
// Usage: readings-go ROOT   (relative paths resolve against ROOT)
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

type envelope struct {
	ID     *json.RawMessage
	Method string
	Params json.RawMessage
}

type callParams struct {
	Name      string
	Arguments json.RawMessage
}

type countArgs struct {
	Count  int64
	Marker string
}

type forceArgs struct {
	Force  bool
	Marker string
}

// skipArgs has a field whose name folds under Unicode: encoding/json matches "ſkip" (U+017F) and
// "sKip" (U+212A, the Kelvin sign) to Skip.
type skipArgs struct {
	Skip   bool
	Marker string
}

type configureArgs struct {
	Opts struct {
		Force bool  `json:"force"`
		Count int64 `json:"count"`
	}
	Marker string
}

type vmArgs struct {
	VM     float64
	Marker string
}

type pathArgs struct {
	Path   string
	Marker string
}

var logFile *os.File
var root string

func record(tool, marker string, value any) string {
	b, _ := json.Marshal(map[string]any{"stack": "go", "tool": tool, "marker": marker, "value": value})
	logFile.Write(append(b, '\n'))
	logFile.Sync()
	return string(b)
}

func reply(out *bufio.Writer, id *json.RawMessage, result any, rpcErr map[string]any) {
	if id == nil {
		return
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

func text(s string, isError bool) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}, "isError": isError}
}

func tools() []any {
	prop := func(name, typ string) map[string]any {
		return map[string]any{"type": "object", "required": []string{name}, "properties": map[string]any{
			name: map[string]any{"type": typ}, "marker": map[string]any{"type": "string"}}}
	}
	opts := prop("opts", "object")
	opts["properties"].(map[string]any)["opts"] = map[string]any{"type": "object", "properties": map[string]any{
		"force": map[string]any{"type": "boolean"}, "count": map[string]any{"type": "integer"}}}
	return []any{
		map[string]any{"name": "spend", "inputSchema": prop("count", "integer")},
		map[string]any{"name": "cap", "inputSchema": prop("count", "integer")},
		map[string]any{"name": "spend_held", "inputSchema": prop("count", "integer")},
		map[string]any{"name": "toggle", "inputSchema": prop("force", "boolean")},
		map[string]any{"name": "skip", "inputSchema": prop("skip", "boolean")},
		map[string]any{"name": "configure", "inputSchema": opts},
		map[string]any{"name": "vm", "inputSchema": prop("vm", "number")},
		map[string]any{"name": "open_path", "inputSchema": prop("path", "string")},
	}
}

// call runs one tool; an argument the typed struct cannot hold is an error result, as in the SDKs.
func call(name string, raw json.RawMessage) (map[string]any, error) {
	switch name {
	case "spend", "cap", "spend_held":
		var a countArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, err
		}
		return text(record(name, a.Marker, map[string]any{"count": a.Count}), false), nil
	case "toggle":
		var a forceArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, err
		}
		return text(record(name, a.Marker, map[string]any{"force": a.Force}), false), nil
	case "skip":
		var a skipArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, err
		}
		return text(record(name, a.Marker, map[string]any{"skip": a.Skip}), false), nil
	case "configure":
		var a configureArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, err
		}
		return text(record(name, a.Marker, map[string]any{"opts": a.Opts}), false), nil
	case "vm":
		var a vmArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, err
		}
		return text(record(name, a.Marker, map[string]any{"vm": a.VM}), false), nil
	case "open_path":
		return openPath(raw)
	}
	return nil, fmt.Errorf("unknown tool %q", name)
}

func openPath(raw json.RawMessage) (map[string]any, error) {
	var a pathArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	target := a.Path
	if !filepath.IsAbs(target) {
		target = filepath.Join(root, target)
	}
	content, err := os.ReadFile(target)
	if err != nil {
		return nil, err
	}
	opened, _ := filepath.EvalSymlinks(target)
	opened, _ = filepath.Abs(opened)
	record("open_path", a.Marker, map[string]any{"opened": opened})
	return text(string(content), false), nil
}

func handle(out *bufio.Writer, line []byte) {
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		return
	}
	switch env.Method {
	case "initialize":
		var p struct{ ProtocolVersion string }
		json.Unmarshal(env.Params, &p)
		reply(out, env.ID, map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "readings-go", "version": "1"},
		}, nil)
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
		result, err := call(p.Name, p.Arguments)
		if err != nil {
			result = text(err.Error(), true)
		}
		reply(out, env.ID, result, nil)
	default:
		if env.ID != nil {
			reply(out, env.ID, nil, map[string]any{"code": -32601, "message": "method not found: " + env.Method})
		}
	}
}

func main() {
	root, _ = os.Getwd()
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	f, err := os.OpenFile(os.Getenv("READINGS_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	logFile = f
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 1 {
			handle(out, line)
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
