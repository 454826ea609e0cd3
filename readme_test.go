package wsfan_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Every example command the README gives names an example that exists
// in the package it names, so a newcomer's copy of it runs one.
func TestReadmeExampleCommands(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	commands := regexp.MustCompile(`go test -run '\^(Example\w*)\$' -v (\./pkg/\w+)`).FindAllStringSubmatch(string(readme), -1)
	if len(commands) < 5 {
		t.Fatalf("the README gives %d example commands", len(commands))
	}
	for _, c := range commands {
		example, pkg := c[1], c[2]
		out, err := exec.Command("go", "test", "-list", "^"+example+"$", pkg).CombinedOutput()
		if err != nil || !strings.Contains(string(out), example+"\n") {
			t.Errorf("the README runs %s in %s, which has none: %s %v", example, pkg, out, err)
		}
	}
}
