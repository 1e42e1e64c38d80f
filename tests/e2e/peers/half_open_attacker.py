"""Another local user's attack on the gateway: open many connections, send half a request header on
each and never finish it. Run as that user (`setpriv --reuid=nobody ...`); the Rust test
`bounds_half_open.rs` passes this file's text with `python3 -c`, so nobody need not read the repo.

argv: port count deadline_secs
Prints (flushed, one per line):
  connected <attempted> <refused_at_connect> <seconds the connecting took>
  open <seconds since connected> <still open>     whenever the count changes
  shed <seconds since connected>                  when every connection is gone
  timeout <still open>                            if the deadline passes first
Standard library only.
"""

import errno
import resource
import select
import socket
import sys
import time

port, count, deadline = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

PARTIAL = b"POST /mcp/flood HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
socks, refused = {}, 0
began = time.monotonic()
for _ in range(count):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(PARTIAL)
        s.setblocking(False)
        socks[s.fileno()] = s
    except OSError:
        refused += 1
print(f"connected {count} {refused} {time.monotonic() - began:.3f}", flush=True)

poller = select.poll()
for fd in socks:
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
start, last = time.monotonic(), None
while socks:
    # The first round does not wait: it counts what the gateway already closed.
    for fd, _ in poller.poll(0 if last is None else 100):
        s = socks[fd]
        try:
            closed = s.recv(4096) == b""
        except BlockingIOError:
            closed = False
        except OSError as e:
            closed = e.errno != errno.EAGAIN
        if closed:
            poller.unregister(fd)
            s.close()
            del socks[fd]
    if len(socks) != last:
        last = len(socks)
        print(f"open {time.monotonic() - start:.3f} {last}", flush=True)
    if time.monotonic() - start > deadline:
        print(f"timeout {len(socks)}", flush=True)
        sys.exit(0)
print(f"open {time.monotonic() - start:.3f} 0", flush=True)
print(f"shed {time.monotonic() - start:.3f}", flush=True)
