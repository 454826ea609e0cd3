package main

import (
	"fmt"
	"runtime/debug"
)

// versionLine is what -version prints: the module's path and version, the
// commit it was built from (marked "modified" when the work tree had
// uncommitted changes) and the Go version. go build stamps the commit;
// go run and go test do not, so they say "commit unknown".
func versionLine(info *debug.BuildInfo, ok bool) string {
	if !ok {
		return "sidecar: no build information (built without module support)"
	}
	commit, modified := "unknown", ""
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			commit = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			modified = " (modified)"
		}
	}
	return fmt.Sprintf("sidecar %s %s, commit %s%s, %s", info.Main.Path, info.Main.Version, commit, modified, info.GoVersion)
}
