package chart

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// Release names the release a chart is rendered as.
type Release struct {
	Name      string
	Namespace string
}

// Lint is `helm lint --strict` of the chart in dir with vals: every
// warning and error (a value the schema refuses, a template that does not
// render, YAML that does not parse) fails it, all of them joined.
func Lint(dir string, vals map[string]any, rel Release) error {
	l := action.NewLint()
	l.Strict = true
	l.Namespace = rel.Namespace
	r := l.Run([]string{dir}, vals)
	if len(r.Errors) == 0 {
		return nil
	}
	return fmt.Errorf("helm lint %s: %w", dir, errors.Join(r.Errors...))
}

// File is one rendered template: its path in the chart and its text.
type File struct {
	Name    string
	Content string
}

// Rendered is what `helm template` prints: the manifests, in the order of
// their paths, and the NOTES.txt shown after an install.
type Rendered struct {
	Manifests []File
	Notes     string
}

// Render is `helm template` of the chart in dir with vals (merged over the
// chart's values.yaml and checked against its schema) for an install of
// rel with Helm's default capabilities. Templates that render to nothing
// (a disabled ServiceMonitor) are left out.
func Render(dir string, vals map[string]any, rel Release) (Rendered, error) {
	c, err := loader.Load(dir)
	if err != nil {
		return Rendered{}, fmt.Errorf("failed to load the chart: %w", err)
	}
	opts := chartutil.ReleaseOptions{Name: rel.Name, Namespace: rel.Namespace, Revision: 1, IsInstall: true}
	top, err := chartutil.ToRenderValues(c, vals, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return Rendered{}, err
	}
	out, err := engine.Render(c, top)
	if err != nil {
		return Rendered{}, err
	}
	var r Rendered
	for _, name := range slices.Sorted(maps.Keys(out)) {
		text := out[name]
		switch {
		case path.Base(name) == "NOTES.txt":
			r.Notes = text
		case strings.TrimSpace(text) == "" || strings.HasSuffix(name, ".tpl"):
		default:
			r.Manifests = append(r.Manifests, File{Name: name, Content: text})
		}
	}
	return r, nil
}

// String is the manifests as helm template prints them: each after a
// document separator and a comment naming its template.
func (r Rendered) String() string {
	var b strings.Builder
	for _, f := range r.Manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", f.Name, strings.TrimSpace(f.Content))
	}
	return b.String()
}
