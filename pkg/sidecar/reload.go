package sidecar

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"
)

// A reload changes some settings while the Server runs, and refuses the
// others. The settings it changes (liveFields) are read through one
// pointer, Server.live, loaded on each use: a request sees one reload's
// settings whole, and nothing in the hot path takes a lock. Every other
// setting shapes something built once (the listener, the upstream
// connection, the queues), so a reload that changes one of them is
// refused whole, and the running settings stay as they were. The
// upstream endpoints are the exception: the upstream client takes a new
// list itself, make before break (reloadendpoints.go).

// liveFields are the Config fields Reload applies while the Server runs,
// by their Go names.
var liveFields = []string{"Upstream", "Fallbacks", "Topics", "AllowedOrigins", "AllowedHosts", "Token", "MaxTopicsPerClient", "MaxCallsPerClient", "MaxBatch"}

// codeFields are the Config fields a configuration file cannot set: a
// reload keeps the running ones.
var codeFields = []string{"Logger", "Registry", "UpstreamOptions", "NATSOptions", "TracerProvider"}

// ErrNeedsRestart is wrapped by Reload's error when the new configuration
// changes a setting that cannot change while the Server runs; nothing of
// it was applied.
var ErrNeedsRestart = errors.New("needs a restart")

// liveSettings are the settings of one reload (or New's), built by
// newLiveSettings and never changed after: Reload swaps the whole value.
type liveSettings struct {
	version string    // configVersion of the effective Config
	applied time.Time // when it took effect

	topics     []string            // Config.Topics
	offeredSet map[string]struct{} // Config.Topics as a set; empty when every topic is asked upstream
	offered    []OfferedTopic      // Config.Topics for /v1/status
	origins    []string            // Config.AllowedOrigins
	hosts      *hostAllowlist      // Config.AllowedHosts
	tokens     [][]byte            // Config.Token's tokens; none: no token is asked
	endpoints  []string            // Config.Upstream, then Config.Fallbacks: the upstream client's

	maxTopicsPerClient int
	maxCallsPerClient  int
	maxBatch           int
}

// newLiveSettings builds the live settings of cfg, validated and with its
// defaults, and hosts, the allowlist built from it.
func newLiveSettings(cfg *Config, offered []OfferedTopic, hosts *hostAllowlist) *liveSettings {
	return &liveSettings{
		version:            configVersion(cfg),
		applied:            time.Now(),
		topics:             cfg.Topics,
		offeredSet:         offeredSet(cfg.Topics),
		offered:            offered,
		origins:            cfg.AllowedOrigins,
		hosts:              hosts,
		tokens:             splitTokens(cfg.Token),
		endpoints:          append([]string{cfg.Upstream}, cfg.Fallbacks...),
		maxTopicsPerClient: cfg.MaxTopicsPerClient,
		maxCallsPerClient:  cfg.MaxCallsPerClient,
		maxBatch:           cfg.MaxBatch,
	}
}

// splitTokens returns Config.Token's comma-separated tokens.
func splitTokens(token string) [][]byte {
	var out [][]byte
	for t := range strings.SplitSeq(token, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, []byte(t))
		}
	}
	return out
}

// holdsToken reports whether token is one of the settings' tokens, in
// time that does not depend on which one it is.
func (l *liveSettings) holdsToken(token []byte) bool {
	held := 0
	for _, t := range l.tokens {
		held |= subtle.ConstantTimeCompare(token, t)
	}
	return held == 1
}

// configVersion is a short hash of the effective configuration: the same
// settings give the same version, in any process. Secrets enter it only
// through their SHA-256.
func configVersion(cfg *Config) string {
	c := *cfg
	c.Token = secretHash(c.Token)
	if len(c.UpstreamHeader) > 0 {
		h := make(http.Header, len(c.UpstreamHeader))
		for k, vs := range c.UpstreamHeader {
			for _, v := range vs {
				h[k] = append(h[k], secretHash(v))
			}
		}
		c.UpstreamHeader = h
	}
	// Every field but codeFields, by name: encoding/json sorts the keys.
	fields := make(map[string]any)
	v := reflect.ValueOf(c)
	for i := range v.NumField() {
		if name := v.Type().Field(i).Name; !slices.Contains(codeFields, name) {
			fields[name] = v.Field(i).Interface()
		}
	}
	b, err := json.Marshal(fields)
	if err != nil { // every field left is plain data
		panic(fmt.Sprintf("sidecar: hashing the config: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// secretHash stands for a secret in configVersion's input.
func secretHash(s string) string {
	if s == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// ReloadResult is what a Reload applied.
type ReloadResult struct {
	// Changed names the settings that changed, by their configuration
	// file keys (max_topics_per_client), in Config's order; empty when
	// the new configuration is the running one.
	Changed []string
	// Version is the running configuration's version (/v1/status
	// config.version) and Applied when it took effect.
	Version string
	Applied time.Time
	// EndpointsKept says why a new list of upstream endpoints was not
	// taken while the rest of the reload was (a session setting holds
	// on the upstream connection, a hot standby, the new endpoint
	// refused a topic): the running endpoints stay, and the version is
	// that of the configuration in force. Nil otherwise.
	EndpointsKept error
}

// Reload applies the configuration load returns while the Server runs,
// dropping no local client and no upstream subscription. Live are the
// offered topics (Config.Topics: a topic taken off keeps its subscribers,
// and new subscribes to it are refused), the allowed origins and hosts,
// the tokens (a client connected with a token that was removed is closed
// with close code 1008 and a reason saying so; SSE streams end), and the
// per-client limits MaxTopicsPerClient and MaxBatch (a client above a
// lowered limit keeps what it holds; its new requests meet the new
// limit) and MaxCallsPerClient (for clients that connect after the
// reload). Logger, Registry, UpstreamOptions, NATSOptions and
// TracerProvider are kept from the running configuration.
//
// A new list of upstream endpoints (Upstream, Fallbacks) is given to the
// upstream client (client.Client.SetEndpoints), before the rest applies:
// its connection stays when its endpoint is in the list; otherwise it
// moves to the new Upstream make before break, every topic subscribed
// there before the old connection closes, so the local clients lose no
// message. The move is refused, and the running endpoints stay, while
// a session setting (cancel-on-disconnect) holds on the connection, with
// a hot standby (each leg keeps its endpoint), in a NATS group, or when
// the new endpoint does not take the connection or a topic: the rest of
// the reload applies, and ReloadResult.EndpointsKept says why (or, when
// the endpoints were the only change, Reload's error, counted refused).
//
// A change to any other setting (Listen, Protocol, UpstreamHeader,
// NATS...) cannot apply live: Reload then applies nothing and returns an
// error wrapping ErrNeedsRestart that names each. An error from load, or
// a configuration New would refuse, applies nothing either.
// Every outcome is counted in wsfan_sidecar_config_reloads_total
// (applied, refused, invalid). Reload logs nothing: its caller logs one
// line of the result (cmd/sidecar does). Reloads are serialised.
func (s *Server) Reload(load func() (Config, error)) (ReloadResult, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	res, outcome, err := s.reload(load)
	s.stats.reloads[outcome].Add(1)
	return res, err
}

// The outcomes of a reload, wsfan_sidecar_config_reloads_total's labels.
const (
	reloadApplied = iota
	reloadRefused
	reloadInvalid
	reloadOutcomes
)

var reloadOutcomeNames = [reloadOutcomes]string{"applied", "refused", "invalid"}

// reload is Reload under reloadMu, reporting the outcome to count.
func (s *Server) reload(load func() (Config, error)) (ReloadResult, int, error) {
	cur := s.live.Load()
	running := ReloadResult{Version: cur.version, Applied: cur.applied}
	cfg, err := load()
	if err != nil {
		return running, reloadInvalid, err
	}
	cfg.Logger, cfg.Registry, cfg.UpstreamOptions, cfg.NATSOptions = s.cfg.Logger, s.cfg.Registry, s.cfg.UpstreamOptions, s.cfg.NATSOptions
	cfg.TracerProvider = s.cfg.TracerProvider
	next, _, err := cfg.withDefaults()
	if err != nil {
		return running, reloadInvalid, err
	}
	if fixed := changedFields(&s.applied, &next, false); len(fixed) > 0 {
		return running, reloadRefused, fmt.Errorf("%s changed: %w, and nothing of the new configuration was applied", strings.Join(fixed, ", "), ErrNeedsRestart)
	}
	hosts, err := newHostAllowlist(next.AllowedHosts, next.Listen, &s.stats.hostRefusals, s.log)
	if err != nil {
		return running, reloadInvalid, err
	}
	var kept error
	if !slices.Equal(cur.endpoints, endpointList(&next)) {
		if kept = s.reloadEndpoints(endpointList(&next)); kept != nil {
			next.Upstream, next.Fallbacks = s.applied.Upstream, s.applied.Fallbacks
			running.EndpointsKept = kept
		}
	}
	changed := slices.Compact(changedFields(&s.applied, &next, true)) // Upstream and Fallbacks are both "upstream"
	if len(changed) == 0 {
		if kept != nil {
			return running, reloadRefused, fmt.Errorf("the upstream endpoints were kept: %w", kept)
		}
		return running, reloadApplied, nil
	}
	live := newLiveSettings(&next, offeredTopics(s.proto, next.Topics), hosts)
	s.applied = next
	s.live.Store(live)
	s.closeRevoked(live)
	return ReloadResult{Changed: changed, Version: live.version, Applied: live.applied, EndpointsKept: kept}, reloadApplied, nil
}

// changedFields returns the file keys of the fields whose values differ
// between a and b: the live ones or the others, never codeFields.
func changedFields(a, b *Config, live bool) []string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var out []string
	for i := range va.NumField() {
		f := va.Type().Field(i)
		if slices.Contains(codeFields, f.Name) || slices.Contains(liveFields, f.Name) != live {
			continue
		}
		if reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			continue
		}
		out = append(out, fieldKey(f))
	}
	return out
}

// fieldKey is a Config field's configuration file key, or its Go name
// for those the file gives under another key (Fallbacks is upstream's).
func fieldKey(f reflect.StructField) string {
	if k := f.Tag.Get("yaml"); k != "" && k != "-" {
		return k
	}
	if f.Name == "Fallbacks" {
		return "upstream"
	}
	return f.Name
}

// refused reports whether live refuses token, a client's: it asks for
// tokens and token (nil for a client that sent none while none was
// asked) is not one of them.
func (l *liveSettings) refused(token []byte) bool {
	return len(l.tokens) > 0 && !l.holdsToken(token)
}

// closeRevoked closes every local client whose token live refuses (one a
// reload removed, or none when a reload began asking for one), after
// what is queued for it.
func (s *Server) closeRevoked(live *liveSettings) {
	for _, ss := range s.clients.list() {
		if live.refused(ss.token) {
			ss.close(reasonTokenRemoved, false)
		}
	}
}

// register adds ss to the live clients, or says why not. A client whose
// token a reload removed while it was being admitted is closed at once,
// so none outlives its token.
func (s *Server) register(ss *session) (closeReason, bool) {
	reason, ok := s.clients.add(ss)
	if ok && s.live.Load().refused(ss.token) {
		ss.close(reasonTokenRemoved, false)
	}
	return reason, ok
}

// tokenKey keys the token a request authenticated with in its context.
type tokenKey struct{}

// requestToken returns the token r authenticated with, nil when the
// sidecar asked for none.
func requestToken(r *http.Request) []byte {
	t, _ := r.Context().Value(tokenKey{}).([]byte)
	return t
}

// withToken returns r's context carrying token.
func withToken(ctx context.Context, token []byte) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// ConfigStatus is the configuration's line of /v1/status.
type ConfigStatus struct {
	// Version is a hash of the effective configuration (every setting
	// after its default; secrets through their SHA-256): equal versions
	// are equal configurations.
	Version string    `json:"version"`
	Applied time.Time `json:"applied"` // when it took effect: New, or the last Reload that changed something
	// Reloads counts reloads by outcome: applied, refused (a setting
	// that needs a restart), invalid.
	Reloads map[string]uint64 `json:"reloads"`
}

// configStatus returns the configuration's status.
func (s *Server) configStatus() ConfigStatus {
	live := s.live.Load()
	st := ConfigStatus{Version: live.version, Applied: live.applied, Reloads: make(map[string]uint64, reloadOutcomes)}
	for i, name := range reloadOutcomeNames {
		st.Reloads[name] = s.stats.reloads[i].Load()
	}
	return st
}

// shortestToken returns the length of Config.Token's shortest token, 0
// for none.
func shortestToken(token string) int {
	short := 0
	for _, t := range splitTokens(token) {
		if short == 0 || len(t) < short {
			short = len(t)
		}
	}
	return short
}
