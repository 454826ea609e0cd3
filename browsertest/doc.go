// Package browsertest drives the sidecar from a real browser (Debian's
// chromium, through chromedp): the status page and an EventSource page,
// with screenshots under out/. It is a module of its own so that chromedp
// never enters the library's go.mod.
package browsertest
