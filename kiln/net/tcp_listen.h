#pragma once
// The socket calls kiln's two servers (the HTTP/1.1 event loop and the gRPC one) share: a
// listening socket, its port, and how many connections the descriptors allow.
// Thread-safety: free functions.

#include <cstddef>
#include <string>

namespace kiln::net {

/// A non-blocking socket listening on `host`:`port` (empty host: every address; port 0: a free
/// one), or -1 when it cannot be had (in use, not an address of this machine). SO_REUSEADDR, so
/// that a restarted server binds at once; never SO_REUSEPORT, with which a second server would
/// share the port in silence.
int listen_tcp(const std::string& host, int port);

/// The port a socket is bound to.
int bound_port(int fd);

/// `host`:`port` as a URL writes it, an IPv6 address in brackets ("[::1]:8500").
std::string host_port(const std::string& host, int port);

/// `wanted` connections, kept under the descriptors this process may open (some kept back for
/// model files, logs and pollers).
size_t connection_limit(int wanted);

/// Accepts one connection, non-blocking, with Nagle's algorithm off (a small answer would wait
/// for the client's delayed ACK, 40 ms); -1 with errno as accept4 leaves it.
int accept_connection(int listen_fd);

}  // namespace kiln::net
