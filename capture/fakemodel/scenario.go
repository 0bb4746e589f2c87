package fakemodel

import (
	"fmt"
	"sync"
)

// Scenario decides the assistant's next turn from a request. Next also
// returns the name of the rule that decided, for the request log.
// Implementations must be safe for concurrent use: agents send requests
// in parallel (a subagent and a title generator, say).
type Scenario interface {
	Next(req *Request) (turn Turn, rule string)
}

// Rule is one step of a Script: when When matches a request, Reply gives
// the turn.
type Rule struct {
	Name  string
	When  func(*Request) bool
	Reply func(*Request) Turn
}

// Script is a Scenario made of rules tried in order; the first match
// answers. A request no rule matches gets Fallback (or, without one, a
// short text turn).
type Script struct {
	Rules    []Rule
	Fallback func(*Request) Turn

	mu    sync.Mutex
	fired map[string]int
}

// Next implements Scenario.
func (s *Script) Next(req *Request) (Turn, string) {
	for _, r := range s.Rules {
		if r.When(req) {
			s.count(r.Name)
			return r.Reply(req), r.Name
		}
	}
	s.count("fallback")
	if s.Fallback != nil {
		return s.Fallback(req), "fallback"
	}
	return Turn{Text: "OK."}, "fallback"
}

func (s *Script) count(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fired == nil {
		s.fired = map[string]int{}
	}
	s.fired[name]++
}

// Fired returns how often each rule answered so far.
func (s *Script) Fired() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.fired))
	for k, v := range s.fired {
		out[k] = v
	}
	return out
}

// Summary is Fired as one line, e.g. for the driver's log.
func (s *Script) Summary() string { return fmt.Sprint(s.Fired()) }
