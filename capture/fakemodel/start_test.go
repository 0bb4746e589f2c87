package fakemodel

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestStartStop starts a real listener on 127.0.0.1, serves one request,
// and stops; a stopped server refuses connections.
func TestStartStop(t *testing.T) {
	s, err := Start(Options{Scenario: &Script{}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL = %q, want a 127.0.0.1 address", s.URL())
	}
	resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"content":"OK."`) {
		t.Errorf("body = %s", body)
	}
	if s.Requests() != 1 {
		t.Errorf("Requests = %d, want 1", s.Requests())
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.URL() + "/v1/models"); err == nil {
		t.Error("a stopped server still answers")
	}
}

func TestNewWithoutScenario(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New without a scenario succeeded")
	}
}
