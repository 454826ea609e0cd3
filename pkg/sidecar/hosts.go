package sidecar

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"
)

// The Host check stops DNS rebinding: a web page on a domain its owner
// re-points at 127.0.0.1 reaches a sidecar on the user's machine from
// the page's own origin, so the browser's same-origin rules and the Origin
// check both let it in (its Origin and Host agree). What gives it away is
// the Host header, which carries the page's domain: a sidecar answers only
// requests addressed to a name it was told it has. go-ethereum guards its
// local RPC the same way (--http.vhosts, rpc/http.go's virtualHostHandler:
// a name must be listed, an IP address is served, as DNS rebinding needs a
// name).

// AnyHost in Config.AllowedHosts turns the Host check off.
const AnyHost = "*"

// loopbackHosts are always allowed: names and addresses that only this
// machine reaches. A browser resolves "localhost" itself (RFC 6761), so a
// page cannot rebind it.
var loopbackHosts = []string{"localhost", "127.0.0.0/8", "::1"}

// hostAllowlist decides whether a request's Host is one of this sidecar's
// names. Built once by newHostAllowlist; its refusal log is safe for
// concurrent use.
type hostAllowlist struct {
	names    map[string]bool // lower case, without a trailing dot
	suffixes []string        // ".example.com" from "*.example.com"
	prefixes []netip.Prefix  // addresses and networks
	// anyIP serves every IP literal: the sidecar listens on all
	// interfaces, so each of the machine's addresses is one of its names.
	anyIP bool
	off   bool // AnyHost

	refused *atomic.Uint64 // stats: requests refused
	log     *zap.Logger
	logged  logOnce // the refused hosts logged
}

// newHostAllowlist builds the allowlist from Config.AllowedHosts and the
// listen address; an entry it cannot read is an error naming it.
func newHostAllowlist(allowed []string, listen string, refused *atomic.Uint64, log *zap.Logger) (*hostAllowlist, error) {
	h := &hostAllowlist{names: make(map[string]bool), refused: refused, log: log}
	for _, e := range append(append([]string{}, loopbackHosts...), allowed...) {
		if err := h.add(e); err != nil {
			return nil, err
		}
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		host = listen
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() || host == "" {
		h.anyIP = true
	} else if err := h.add(host); err != nil {
		return nil, err
	}
	return h, nil
}

// add allows one entry: AnyHost, a name, "*.domain", an IP address or a
// network (CIDR).
func (h *hostAllowlist) add(e string) error {
	e = strings.TrimSpace(e)
	switch {
	case e == AnyHost:
		h.off = true
		return nil
	case strings.HasPrefix(e, "*."):
		if !validName(e[2:]) {
			return fmt.Errorf("allowed host %q: want *. followed by a domain name", e)
		}
		h.suffixes = append(h.suffixes, strings.ToLower(strings.TrimSuffix(e[1:], ".")))
		return nil
	}
	if p, err := netip.ParsePrefix(e); err == nil {
		h.prefixes = append(h.prefixes, p.Masked())
		return nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
		h.prefixes = append(h.prefixes, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
		return nil
	}
	if !validName(e) {
		return fmt.Errorf("allowed host %q: want a host name without a port (sidecar.example), *.domain, an IP address or a network (10.0.0.0/8), or * for any", e)
	}
	h.names[strings.ToLower(strings.TrimSuffix(e, "."))] = true
	return nil
}

// validName reports whether s is a DNS name: letters, digits, '-', '_'
// and dots, nothing else (no port, no scheme).
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// allows reports whether a request's Host (with or without a port) is
// one of the sidecar's names.
func (h *hostAllowlist) allows(hostport string) bool {
	if h.off {
		return true
	}
	host := hostOnly(hostport)
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		if h.anyIP {
			return true
		}
		for _, p := range h.prefixes {
			if p.Contains(ip) {
				return true
			}
		}
		return false
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "" {
		return false
	}
	if h.names[name] {
		return true
	}
	for _, s := range h.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// hostOnly strips the port and an IPv6 address's brackets from a Host
// header.
func hostOnly(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return strings.Trim(hostport, "[]")
}

// wrapHosts refuses, before anything else runs, a request whose Host the
// allowlist of the moment (live, swapped by a reload) does not allow: 403
// with a body naming the host and how to allow it, logged once per host
// and counted.
func wrapHosts(live *atomic.Pointer[liveSettings], next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		live.Load().hosts.serve(next, w, r)
	})
}

// serve serves r with next when its Host is allowed, else refuses it.
func (h *hostAllowlist) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	if h.off || h.allows(r.Host) {
		next.ServeHTTP(w, r)
		return
	}
	h.refused.Add(1)
	host := hostOnly(r.Host)
	h.logRefusal(host, r)
	http.Error(w, fmt.Sprintf("host %q is not allowed: this sidecar answers only requests addressed to its own names "+
		"(localhost, loopback addresses, its listen address; a guard against DNS rebinding). "+
		"To serve it under %q, add that name to -allowed-hosts (WSFAN_ALLOWED_HOSTS, allowed_hosts in the config file, Config.AllowedHosts).",
		host, host), http.StatusForbidden)
}

// logRefusal logs the first refusal of each host, up to mostLogged
// hosts, then once that the rest are not logged.
func (h *hostAllowlist) logRefusal(host string, r *http.Request) {
	logHost, logFull := h.logged.first(host)
	if logHost {
		h.log.Warn("refused a request for a host that is not allowed (DNS rebinding?); add it to -allowed-hosts if it is this sidecar's name",
			zap.String("host", host), zap.String("path", r.URL.Path), zap.String("remote", r.RemoteAddr), zap.String("origin", r.Header.Get("Origin")))
	}
	if logFull {
		h.log.Warn("refused another host; further refused hosts are counted in wsfan_sidecar_host_refusals_total, not logged",
			zap.String("host", host))
	}
}
