// Package netpolicy is the sandbox's network boundary: the gateway that is
// its only way out, and (in netpolicy/bridge) the relay inside the sandbox
// that reaches it.
//
// The sandbox's network namespace has only lo. The gateway listens on a unix
// socket in the run directory, bind-mounted into the sandbox, where
// agentbox's init forwards 127.0.0.1:PORT and [::1]:PORT to it. The gateway
// serves three things on that one port:
//
//   - Model routes: /NAME/REST goes to the upstream NAME ("openai",
//     "anthropic", "google", or one the policy names) at its base URL + REST. The agent
//     holds only a per-run token (NewToken); the gateway checks it and sends
//     the real key, read on the host, in its place. Responses, server-sent
//     events included, are streamed: every read from the upstream is written
//     to the agent at once. A route can restrict model names.
//   - An HTTP proxy (absolute-form requests and CONNECT; TLS inside a tunnel
//     is not touched) to the hosts of network.allow only, empty by default.
//   - HealthPath, for the self-test's gateway-reachable probe.
//
// Security-relevant defaults, and how to change them:
//
//   - The proxy refuses, whatever the allowlist says, every loopback,
//     private, link-local (cloud metadata), CGNAT, multicast, reserved and
//     unspecified address, in every spelling (decimal, octal, hex and short
//     IPv4 forms, IPv4-mapped, NAT64 and 6to4 IPv6): see DeniedAddr and
//     ParseHost. It also refuses the addresses on every interface of the
//     network namespace it runs in (the host's own public and global IPv6
//     addresses), read at start and again when older than a second
//     (InterfaceAddrs, WithHostAddrs). There is no override. A name is
//     looked up only after it passed the allowlist, exactly once, and the
//     gateway connects to the addresses it checked (no second lookup, so
//     DNS rebinding fails). A name with any denied address is refused whole.
//   - Model upstreams the user names (Upstream.URL, `--upstream NAME=URL`)
//     may be on loopback or a private network, since the user chose them;
//     the built-in OpenAI and Anthropic URLs are held to the proxy's rules.
//   - Model routes forward only GET, POST and DELETE; any
//     other method is 405 before a key is attached. The real key, and its
//     base64 in both alphabets and inside longer encoded strings, is
//     overwritten with ScrubMarker in what the upstream sends back
//     (headers, the streamed body, errors); keys under 16 bytes are not
//     scrubbed.
//   - The CONNECT target (or absolute URL) and the Host header must agree;
//     the destination always receives the checked host as Host.
//   - Limits (Config.Limits) bound concurrent connections (and the
//     refusals pending beyond them), idle time, the time to send a request
//     head and a checked body, head and checked-body sizes, the memory all
//     checked bodies hold together, and the decision log's size and line
//     length. docs/gateway.md has the table with every default.
//   - Every decision is one JSON line in the decision log (Decision) and is
//     counted (Stats); identical denials are collapsed into a count line,
//     and past the log's byte cap decisions are counted, not written. No
//     line holds a header value, a key or the token.
//   - A refusal answers 403 (or 400, 401, 404, 405, 408, 413, 431, 502,
//     503) with a plain-text reason an agent can show, also in
//     X-Agentbox-Refusal.
package netpolicy
