// Package chart lints and renders the Helm chart in deploy/helm/wsfan with
// the Helm Go SDK, so neither needs a helm binary: Lint is `helm lint
// --strict`, Render is `helm template` (values checked against the chart's
// values.schema.json, as helm does).
//
// Nothing here runs goroutines of its own; every function is called from
// the caller's goroutine.
package chart
