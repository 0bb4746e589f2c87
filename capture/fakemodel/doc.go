// Package fakemodel serves scripted stand-ins for the model APIs that coding
// agents call, so that a real, unmodified agent can be recorded offline
// (the capture rig).
//
// A Server listens on 127.0.0.1 only. Each API handler (one file per API:
// anthropic.go for Anthropic Messages, chat.go for OpenAI Chat
// Completions, responses.go for OpenAI Responses, gemini.go for Gemini
// streamGenerateContent) decodes a request into the API-neutral Request,
// asks the Scenario for the next assistant Turn, and encodes that turn in
// the API's streaming (SSE) or plain JSON form. Every request body is
// logged, with the rule that answered it, for debugging a new agent
// version.
package fakemodel
