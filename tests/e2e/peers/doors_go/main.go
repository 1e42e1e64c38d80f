// A minimal stdio MCP server that reads resources/read, resources/subscribe and prompts/get the way
// a hand-written Go server does: encoding/json into structs (field names match keys
// case-insensitively, the last match wins: "URI", "Uri" and "uri" are one field) and net/url for
// the URI. Every such request is appended to $DOORS_LOG as
// {"stack","method","uri","name","path","host","user","parse_error","request"} before the answer:
// what this stack would open. tools/call echo is answered too (the suite's barrier).
package main

import (
	"bufio"
	"encoding/json"
	"net/url"
	"os"
)

type envelope struct {
	JSONRPC string
	ID      *json.RawMessage
	Method  string
	Params  json.RawMessage
}

type doorParams struct {
	URI  string
	Name string
}

type callParams struct {
	Name      string
	Arguments map[string]any
}

var out = bufio.NewWriter(os.Stdout)

func send(v any) {
	b, _ := json.Marshal(v)
	out.Write(b)
	out.WriteByte('\n')
	out.Flush()
}

func answer(id *json.RawMessage, result any, err any) {
	if id == nil {
		return
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if err != nil {
		msg["error"] = err
	} else {
		msg["result"] = result
	}
	send(msg)
}

func logDoor(entry map[string]any) {
	path := os.Getenv("DOORS_LOG")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	b, _ := json.Marshal(entry)
	f.Write(append(b, '\n'))
	f.Sync()
}

func handle(line []byte) {
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		send(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32700, "message": err.Error()}})
		return
	}
	switch env.Method {
	case "initialize":
		answer(env.ID, map[string]any{
			"protocolVersion": "2025-06-18",
			"capabilities":    map[string]any{"tools": map[string]any{}, "resources": map[string]any{"subscribe": true}, "prompts": map[string]any{}},
			"serverInfo":      map[string]any{"name": "doors-go", "version": "1"},
		}, nil)
	case "ping":
		answer(env.ID, map[string]any{}, nil)
	case "tools/list":
		answer(env.ID, map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}}, nil)
	case "tools/call":
		var p callParams
		json.Unmarshal(env.Params, &p)
		answer(env.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "Echo"}}}, nil)
	case "resources/read", "resources/subscribe", "prompts/get":
		var p doorParams
		if err := json.Unmarshal(env.Params, &p); err != nil {
			answer(env.ID, nil, map[string]any{"code": -32602, "message": err.Error()})
			return
		}
		entry := map[string]any{"stack": "go", "method": env.Method, "request": string(line)}
		if env.Method == "prompts/get" {
			entry["name"] = p.Name
			logDoor(entry)
			answer(env.ID, map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "prompt " + p.Name}}}}, nil)
			return
		}
		entry["uri"] = p.URI
		path := ""
		u, err := url.Parse(p.URI)
		if err != nil {
			entry["parse_error"] = err.Error()
		} else {
			path = u.Path
			entry["path"] = u.Path
			entry["host"] = u.Host
			if u.User != nil {
				entry["user"] = u.User.String()
			}
		}
		logDoor(entry)
		if env.Method == "resources/subscribe" {
			answer(env.ID, map[string]any{}, nil)
			return
		}
		answer(env.ID, map[string]any{"contents": []any{map[string]any{"uri": p.URI, "text": "read " + path}}}, nil)
	default:
		if len(env.Method) >= 14 && env.Method[:14] == "notifications/" {
			return
		}
		answer(env.ID, nil, map[string]any{"code": -32601, "message": "method not found: " + env.Method})
	}
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
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
				handle(line)
			}
		}
		if err != nil {
			return
		}
	}
}
