// Command acp-capture records a real ACP agent against a scripted fake
// model (the capture rig, capture/README.md):
//
//	acp-capture --script qwen/foreground --out capture.jsonl \
//	    --workspace /tmp/acp-capture/qwen/ws --env HOME=/tmp/acp-capture/qwen/home \
//	    --env OPENAI_BASE_URL={{MODEL_URL}}/v1 -- qwen --acp
//
// It starts the fake model server (capture/fakemodel) on 127.0.0.1,
// renders the config templates and environment with the server's URL,
// runs the agent with that environment only, drives one session as a
// plain client (capture/driver), and checks the capture for paths and
// names of the recording machine.
package main
