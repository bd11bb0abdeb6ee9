package main

import (
	"bytes"
	"os"
	"testing"
)

// rules_gen.go is what gen makes of the committed gitleaks.toml.
func TestGeneratedUpToDate(t *testing.T) {
	data, err := os.ReadFile("../gitleaks.toml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../rules_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("rules_gen.go is not what gitleaks.toml generates: run go generate ./internal/secrets")
	}
}
