package sessions_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// zedClient is a scripted client that behaves as Zed's ACP client does
// with subagent cards, from Zed's source (zed-industries/zed; the facts
// are also in docs/compatibility.md, "Zed"); Zed itself does not run
// here:
//
//   - crates/acp_thread acp_thread.rs: a tool call carries
//     _meta.subagent_session_info (SUBAGENT_SESSION_INFO_META_KEY), parsed
//     by serde into {session_id: String, message_start_index: usize,
//     message_end_index: Option<usize>}: message_start_index is required
//     and unsigned, else the whole key is ignored; read from tool_call
//     (ToolCall::from_acp) and tool_call_update (update_fields), and it
//     sticks when an update leaves it out. Such a call is_subagent().
//   - crates/agent_ui thread_view: render_any_tool_call hands a subagent
//     call to render_subagent_tool_call, which finds the child's thread
//     among the loaded ones; render_subagent_card, without it, draws the
//     header only (status icon and the call's title: no content), with it
//     the child's entries (render_subagent_expanded_content, the last 8).
//     A plain call (render_tool_call) shows its content.
//   - crates/agent_servers acp.rs: a session is registered before
//     session/load is sent (every session/update on it before the answer
//     is its history); handle_session_notification drops a notification
//     for a session not loaded ("Received session notification for
//     unknown session"); handle_request_permission answers a request on
//     one with the internal error "unknown session: <id>".
//   - conversation_view.rs load_subagent_session: children are loaded
//     only when a thread's view is built (a thread reopened from history)
//     and only from an agent that advertised loadSession: true.
type zedClient struct {
	t      *testing.T
	schema *rewritetest.Schema
	loaded map[string]*zedThread
	// newSessions: ids of session/new requests waiting for their answer.
	newSessions map[string]bool
	// loads: ids of session/load requests (the client's own) -> session,
	// answered when the answer comes.
	loads    map[string]string
	answered map[string]bool
	// dropped: notifications for sessions not loaded; stranded: requests
	// on them (Zed answers them "unknown session").
	dropped, stranded []string
}

// zedThread is one loaded session as Zed holds it.
type zedThread struct {
	updates [][]byte            // its session/update "update" objects, in order
	cards   map[string]*zedCard // tool calls by id
	order   []string
}

// zedCard is one tool call as Zed holds it.
type zedCard struct {
	info        *zedInfo
	content     []byte
	status      string
	sawProgress bool
}

// zedInfo is Zed's SubagentSessionInfo.
type zedInfo struct {
	SessionID         string  `json:"session_id"`
	MessageStartIndex uint64  `json:"message_start_index"`
	MessageEndIndex   *uint64 `json:"message_end_index"`
}

// parseZedInfo reads the key as serde would: an object whose session_id
// is a string and message_start_index an unsigned integer (required), and
// message_end_index absent, null or unsigned; anything else is no key.
func parseZedInfo(raw []byte) *zedInfo {
	if rawjson.FirstByte(raw) != '{' {
		return nil
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil {
		return nil
	}
	if _, ok := probe["message_start_index"]; !ok {
		return nil
	}
	var info zedInfo
	if json.Unmarshal(raw, &info) != nil || info.SessionID == "" {
		return nil
	}
	return &info
}

func newZedClient(t *testing.T, schema *rewritetest.Schema) *zedClient {
	return &zedClient{t: t, schema: schema, loaded: map[string]*zedThread{}, newSessions: map[string]bool{},
		loads: map[string]string{}, answered: map[string]bool{}}
}

// sent notes a request the client sends.
func (z *zedClient) sent(frame []byte) {
	env := pipe.Peek(frame)
	if env.Kind != pipe.Request {
		return
	}
	switch string(env.Method) {
	case "session/new":
		z.newSessions[string(env.ID)] = true
	case "session/load":
		sid, _ := rawjson.LookupString(env.Params, "sessionId")
		z.loaded[sid] = &zedThread{cards: map[string]*zedCard{}} // registered before it is sent
		z.loads[string(env.ID)] = sid
	}
}

// receive takes a frame the proxy wrote to the client.
func (z *zedClient) receive(frame []byte) {
	t := z.t
	t.Helper()
	env := pipe.Peek(frame)
	if m := string(env.Method); m != "" && !strings.HasPrefix(m, "_") {
		if err := z.schema.Validate(frame); err != nil {
			t.Errorf("P3: frame to Zed fails the ACP schema: %v\n%s", err, frame)
		}
	}
	switch env.Kind {
	case pipe.Response:
		id := string(env.ID)
		if z.newSessions[id] {
			delete(z.newSessions, id)
			if sid, ok := rawjson.LookupString(frame, "result", "sessionId"); ok {
				z.loaded[sid] = &zedThread{cards: map[string]*zedCard{}}
			}
		}
		if _, ok := z.loads[id]; ok {
			if env.Error {
				t.Errorf("Z2: Zed's session/load %s failed: %s", id, frame)
			}
			z.answered[id] = true
		}
	case pipe.Notification:
		if string(env.Method) != "session/update" {
			return // not routed by session (extension notifications)
		}
		sid, _ := rawjson.LookupString(env.Params, "sessionId")
		th, ok := z.loaded[sid]
		if !ok {
			z.dropped = append(z.dropped, string(frame))
			return
		}
		if string(env.Method) == "session/update" {
			upd, _ := rawjson.Lookup(env.Params, "update")
			th.add(upd)
		}
	case pipe.Request:
		sid, ok := rawjson.LookupString(env.Params, "sessionId")
		if _, known := z.loaded[sid]; ok && !known {
			z.stranded = append(z.stranded, "unknown session: "+sid+": "+string(frame))
		}
	}
}

func (th *zedThread) add(upd []byte) {
	th.updates = append(th.updates, bytes.Clone(upd))
	tag, _ := rawjson.LookupString(upd, "sessionUpdate")
	if tag != "tool_call" && tag != "tool_call_update" {
		return
	}
	id, _ := rawjson.LookupString(upd, "toolCallId")
	c, ok := th.cards[id]
	if !ok || tag == "tool_call" {
		c = &zedCard{}
		if !ok {
			th.order = append(th.order, id)
		}
		th.cards[id] = c
	}
	if raw, ok := rawjson.Lookup(upd, "_meta", "subagent_session_info"); ok {
		if info := parseZedInfo(raw); info != nil {
			c.info = info // sticks: an update without it keeps it
		}
	}
	if content, ok := rawjson.Lookup(upd, "content"); ok {
		c.content = bytes.Clone(content)
		if bytes.Contains(content, []byte(`"progress":true`)) {
			c.sawProgress = true
		}
	}
	if st, ok := rawjson.LookupString(upd, "status"); ok {
		c.status = st
	}
}

// zedRun is one recording played to the scripted Zed client.
type zedRun struct {
	t      *testing.T
	r      *route.Router
	z      *zedClient
	outs   []routetest.Output
	buf    []route.Out
	nextID int
}

// feed hands the router a frame; seq is the recording's number of it
// (0 for a frame the test makes), so that a frame forwarded unchanged is
// pinned as its seq (compact).
func (run *zedRun) feed(from pipe.Side, frame []byte, seq int64) []route.Out {
	run.t.Helper()
	if from == pipe.Client {
		run.z.sent(frame)
	}
	run.buf = run.r.Handle(from, frame, run.buf[:0])
	outs := make([]route.Out, 0, len(run.buf))
	for _, o := range run.buf {
		o.Frame = bytes.Clone(o.Frame)
		outs = append(outs, o)
		run.outs = append(run.outs, routetest.Output{Out: o, In: pipe.Record{Seq: seq}})
		if o.To == pipe.Client {
			run.z.receive(o.Frame)
		}
	}
	return outs
}

// asZed returns recs with the client's initialize naming Zed
// (clientInfo.name "zed"): the recordings' clients are the capture rig's.
func asZed(t *testing.T, recs []pipe.Record) []pipe.Record {
	t.Helper()
	out := slices.Clone(recs)
	for i, rec := range out {
		if env := pipe.Peek(rec.Frame); rec.From == pipe.Client && string(env.Method) == "initialize" {
			f, err := rawjson.Set(rec.Frame, []byte(`{"name":"zed","version":"0.220.0"}`), "params", "clientInfo")
			if err != nil {
				t.Fatal(err)
			}
			out[i].Frame = f
		}
	}
	return out
}

// TestZedClientRecordings plays every bundled recording of every vendor
// through the whole module list to the scripted Zed client (zedClient),
// live and then reopened, and checks what a Zed user would see:
//
//   - live (Z1, Z4): no frame carries the key (a live card would hide the
//     call's content, P7); no notification is dropped and no request is
//     stranded on a session Zed has not loaded; a launch call whose
//     subagent the vendor links frames to shows progress in its content
//     while it runs;
//   - reopened (Z1-Z3): Zed loads each session it made; the agent replays
//     the session's recorded session/update notifications (no recording
//     here has a session/load: the replay is the recorded stream, which
//     is what an agent that replays its history sends); every launch call
//     becomes one subagent card with its own child id; Zed loads each
//     child, the proxy answers (nothing reaches the agent) with the
//     launch prompt first and then exactly the frames the vendor linked
//     to the call, in order;
//   - every frame Zed gets matches the ACP schema.
//
// What Zed gets, live and reopened, is pinned byte for byte in
// testdata/captures/<vendor>-<capture>.zed.jsonl (a frame forwarded
// unchanged as its input's seq; go test -update rewrites them).
//
// A recording whose client opted in to Subagent Sessions gets none of it;
// those of the agents that ignore the opt-in (Gemini CLI, OpenCode, Qwen
// Code) are played again without it, as Zed, which never opts in.
func TestZedClientRecordings(t *testing.T) {
	schema := rewritetest.LoadSchema(t)
	files, err := filepath.Glob(filepath.Join(capturesRoot, "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	vendors := map[string]int{}
	for _, path := range files {
		if strings.HasSuffix(path, ".replay.jsonl") {
			continue
		}
		vendor := filepath.Base(filepath.Dir(path))
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		recs := asZed(t, routetest.ReadRecords(t, data))
		declared := optedIn(recs)
		t.Run(vendor+"/"+name, func(t *testing.T) {
			cards, outs := playZed(t, schema, recs, declared)
			vendors[vendor] += cards
			if !declared {
				rewritetest.CheckFile(t, filepath.Join("testdata", "captures", vendor+"-"+name+".zed.jsonl"), compact(outs))
			}
		})
		if declared && ignoresOptIn[vendor] {
			// Zed never opts in; these agents send the same frames
			// either way (TestCaptures), so the recording is also what
			// Zed would get.
			t.Run(vendor+"/"+name+"/as-zed", func(t *testing.T) {
				cards, outs := playZed(t, schema, withoutOptIn(t, recs), false)
				vendors[vendor] += cards
				rewritetest.CheckFile(t, filepath.Join("testdata", "captures", vendor+"-"+name+".as-zed.zed.jsonl"), compact(outs))
			})
		}
	}
	for _, v := range []string{"claude", "codex", "cursor", "gemini", "opencode", "qwen"} {
		if vendors[v] == 0 {
			t.Errorf("no subagent card for %s in any recording", v)
		}
	}
}

// ignoresOptIn are the vendors whose recorded agents ignore
// clientCapabilities.subagents (docs/compatibility.md, "Subagent
// sessions").
var ignoresOptIn = map[string]bool{"gemini": true, "opencode": true, "qwen": true}

// withoutOptIn returns recs with the client's initialize declaring no
// Subagent Sessions (either spelling), as Zed's does.
func withoutOptIn(t *testing.T, recs []pipe.Record) []pipe.Record {
	t.Helper()
	out := slices.Clone(recs)
	for i, rec := range out {
		if env := pipe.Peek(rec.Frame); rec.From == pipe.Client && string(env.Method) == "initialize" {
			f, err := rawjson.Delete(rec.Frame, "params", "clientCapabilities", "subagents")
			if err == nil {
				if _, ok := rawjson.Lookup(f, "params", "clientCapabilities", "_meta", "subagents"); ok {
					f, err = rawjson.Delete(f, "params", "clientCapabilities", "_meta", "subagents")
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			out[i].Frame = f
		}
	}
	if optedIn(out) {
		t.Fatal("the opt-in is still there")
	}
	return out
}

// playZed plays one recording to the scripted client (see
// TestZedClientRecordings) and returns how many cards the reopened
// threads showed.
func playZed(t *testing.T, schema *rewritetest.Schema, recs []pipe.Record, declared bool) (int, []routetest.Output) {
	t.Helper()
	r, err := route.NewRouter(route.RouterConfig{Modules: modules(), Version: routetest.Version})
	if err != nil {
		t.Fatal(err)
	}
	run := &zedRun{t: t, r: r, z: newZedClient(t, schema)}
	linkedLive := map[string]bool{} // launch calls the vendor linked frames to, live
	for _, rec := range recs {
		outs := run.feed(rec.From, rec.Frame, rec.Seq)
		if rec.From != pipe.Agent {
			continue
		}
		for _, o := range outs {
			if p, ok := rawjson.LookupString(routetest.Described(o.Frame), "_meta", "acp-normalize", "parentToolCallId"); ok && o.To == pipe.Client {
				tag, _ := rawjson.LookupString(o.Frame, "params", "update", "sessionUpdate")
				if tag == "agent_message_chunk" || tag == "tool_call" {
					linkedLive[p] = true
				}
			}
		}
	}
	if declared {
		// Zed never opts in to Subagent Sessions: such a client gets the
		// standard shapes (S0-S8) and none of Z1-Z4.
		for _, o := range run.outs {
			if o.To == pipe.Client && (bytes.Contains(o.Frame, []byte(`"subagent_session_info"`)) || bytes.Contains(o.Frame, []byte(`"progress":true`))) {
				t.Errorf("Z1, Z4: a client that opted in got Zed's key or progress: %s", o.Frame)
			}
		}
		return 0, run.outs
	}
	for _, o := range run.outs {
		if o.To == pipe.Client && bytes.Contains(o.Frame, []byte(`"subagent_session_info"`)) {
			t.Errorf("Z1: a live frame carries Zed's key (a live card would hide the call's content): %s", o.Frame)
		}
	}
	if len(run.z.dropped) > 0 {
		t.Errorf("live: Zed dropped %d notification(s) for sessions it has not loaded, first: %s", len(run.z.dropped), run.z.dropped[0])
	}
	if len(run.z.stranded) > 0 {
		t.Errorf("live: %d request(s) Zed would answer with an error: %s", len(run.z.stranded), run.z.stranded[0])
	}
	for sid, th := range run.z.loaded {
		for _, id := range th.order {
			if linkedLive[id] && !th.cards[id].sawProgress {
				t.Errorf("Z4: launch call %s of %s showed no progress while its subagent worked", id, sid)
			}
		}
	}
	sessions := make([]string, 0, len(run.z.loaded))
	for sid := range run.z.loaded {
		sessions = append(sessions, sid)
	}
	slices.Sort(sessions)
	cards := 0
	for _, sid := range sessions {
		cards += reopen(t, run, recs, sid, declared)
	}
	if len(run.z.dropped) > 0 || len(run.z.stranded) > 0 {
		t.Errorf("reopened: Zed dropped %d notification(s) and would refuse %d request(s): %q %q", len(run.z.dropped), len(run.z.stranded), run.z.dropped, run.z.stranded)
	}
	return cards, run.outs
}

// reopen reopens session sid in the scripted client (Z3) and checks its
// cards and child threads; it returns the number of cards.
func reopen(t *testing.T, run *zedRun, recs []pipe.Record, sid string, declared bool) int {
	t.Helper()
	run.nextID++
	loadID := strconv.Quote("zed-load-" + strconv.Itoa(run.nextID))
	load := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"session/load","params":{"sessionId":%s,"cwd":"/work","mcpServers":[]}}`, loadID, strconv.Quote(sid))
	start := len(run.outs)
	run.feed(pipe.Client, []byte(load), 0)
	for _, rec := range recs {
		if rec.From != pipe.Agent || string(pipe.Peek(rec.Frame).Method) != "session/update" {
			continue
		}
		if s, _ := rawjson.LookupString(rec.Frame, "params", "sessionId"); s == sid {
			run.feed(pipe.Agent, rec.Frame, rec.Seq)
		}
	}
	run.feed(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":`+loadID+`,"result":{}}`), 0)
	if !run.z.answered[loadID] {
		t.Fatalf("Z3: the load of %s was not answered", sid)
	}
	th := run.z.loaded[sid]
	// What the replay gave the client: launch calls (with their snapshot)
	// and the frames linked to each.
	launches := map[string]string{} // toolCallId -> prompt
	var launchOrder []string
	linked := map[string][][]byte{}
	for _, o := range run.outs[start:] {
		if o.To != pipe.Client {
			continue
		}
		upd, _ := rawjson.Lookup(o.Frame, "params", "update")
		if s, _ := rawjson.LookupString(o.Frame, "params", "sessionId"); s != sid || upd == nil {
			continue
		}
		if snap, ok := rawjson.Lookup(upd, "_meta", "acp-normalize", "subagent"); ok {
			id, _ := rawjson.LookupString(upd, "toolCallId")
			if _, seen := launches[id]; !seen {
				launchOrder = append(launchOrder, id)
			}
			launches[id], _ = rawjson.LookupString(snap, "prompt")
		}
		if p, ok := rawjson.LookupString(upd, "_meta", "acp-normalize", "parentToolCallId"); ok {
			linked[p] = append(linked[p], stripMeta(upd))
		}
	}
	if declared {
		for _, id := range launchOrder {
			if th.cards[id] != nil && th.cards[id].info != nil {
				t.Errorf("Z1: launch call %s carries Zed's key for a client that opted in to Subagent Sessions", id)
			}
		}
		return 0
	}
	// The view is built: Zed loads the child of every card.
	children := map[string]string{} // child -> launch call
	for _, id := range launchOrder {
		c := th.cards[id]
		if c == nil || c.info == nil {
			t.Errorf("Z1: launch call %s of %s is no subagent card after the reopen", id, sid)
			continue
		}
		if prev, dup := children[c.info.SessionID]; dup {
			t.Errorf("Z1: launch calls %s and %s share the child %s (one card per subagent)", prev, id, c.info.SessionID)
		}
		children[c.info.SessionID] = id
	}
	for _, id := range th.order {
		if c := th.cards[id]; c.info != nil && launches[id] == "" && !slices.Contains(launchOrder, id) {
			t.Errorf("Z1: tool call %s is a subagent card but no launch call", id)
		}
	}
	for _, child := range slices.Sorted(mapKeys(children)) {
		id := children[child]
		run.nextID++
		cid := strconv.Quote("zed-load-" + strconv.Itoa(run.nextID))
		before := len(run.outs)
		run.feed(pipe.Client, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"session/load","params":{"sessionId":%s,"cwd":"/work","mcpServers":[]}}`, cid, strconv.Quote(child))), 0)
		for _, o := range run.outs[before:] {
			if o.To == pipe.Agent {
				t.Errorf("Z2: the load of child %s reached the agent: %s", child, o.Frame)
			}
		}
		if !run.z.answered[cid] {
			t.Errorf("Z2: the load of child %s was not answered", child)
			continue
		}
		kid := run.z.loaded[child]
		var got [][]byte
		for _, u := range kid.updates {
			got = append(got, stripMeta(u))
		}
		if p := launches[id]; p != "" {
			if len(got) == 0 || !bytes.Contains(got[0], []byte(`"user_message_chunk"`)) {
				t.Errorf("Z2: child %s of %s does not start with the prompt: %q", child, id, got)
			} else {
				got = got[1:]
			}
		}
		want := linked[id]
		if len(got) > len(want) && len(want) == 0 || len(got) == len(want)+1 && len(want) > 0 && !hasMessage(want) {
			got = got[:len(want)] // the result as the child's message, when the vendor linked none
		}
		if len(got) != len(want) {
			t.Errorf("Z2: child %s of %s holds %d linked frames, the replay linked %d", child, id, len(got), len(want))
			continue
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("Z2: child %s frame %d:\n got %s\nwant %s", child, i, got[i], want[i])
			}
		}
	}
	return len(children)
}

func hasMessage(updates [][]byte) bool {
	return slices.ContainsFunc(updates, func(u []byte) bool { return bytes.Contains(u, []byte(`"agent_message_chunk"`)) })
}

// stripMeta returns an update without its _meta (Zed's key and the
// proxy's marks differ between the parent's copy and the child's).
func stripMeta(upd []byte) []byte {
	out, err := rawjson.Delete(upd, "_meta")
	if err != nil {
		return upd
	}
	return out
}

func mapKeys[M ~map[K]V, K comparable, V any](m M) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// FuzzZed feeds arbitrary frames, from either side, to a Zed client's
// connection in the middle of a reopen (rules Z1-Z4: a launch call with
// linked frames live, the parent's load pending, the child loaded)
// through the whole module list: the router must not panic, a valid
// JSON frame is never turned into invalid JSON, and a frame forwarded
// as it is keeps its bytes (P1, P5).
func FuzzZed(f *testing.F) {
	launch := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"toolu_1","title":"Copy","status":"pending","rawInput":{"description":"Copy","prompt":"Copy it"},"_meta":{"claudeCode":{"toolName":"Agent"}}}}}`
	linked := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"_meta":{"claudeCode":{"parentToolUseId":"toolu_1"}}}}}`
	for _, s := range []string{
		launch, linked,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","content":[{"type":"content","content":{"type":"text","text":"x"}}],"_meta":{"claudeCode":{"toolName":"Agent"}}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t2","title":"Read","_meta":{"acp-normalize":{"parentToolCallId":"toolu_1"}}}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"x","_meta":{"acp-normalize":{"parentToolCallId":"toolu_1"}}}}}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","id":8,"method":"session/load","params":{"sessionId":"` + childID + `"}}`,
		`{"jsonrpc":"2.0","id":9,"method":"session/close","params":{"sessionId":"` + childID + `"}}`,
		`{"jsonrpc":"2.0","id":9,"method":"session/load","params":{"sessionId":"acp-normalize-subagent-000000000000000000000000"}}`,
	} {
		f.Add([]byte(s), strings.Contains(s, `"session/load"`) || strings.Contains(s, `"session/close"`))
	}
	f.Fuzz(func(t *testing.T, frame []byte, fromClient bool) {
		r, err := route.NewRouter(route.RouterConfig{Modules: modules(), Version: "0"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []struct {
			from  pipe.Side
			frame string
		}{
			{pipe.Client, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"zed"}}}`},
			{pipe.Agent, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`},
			{pipe.Agent, launch}, {pipe.Agent, linked},
			{pipe.Client, `{"jsonrpc":"2.0","id":5,"method":"session/load","params":{"sessionId":"s1"}}`},
			{pipe.Agent, launch}, {pipe.Agent, linked},
			{pipe.Client, `{"jsonrpc":"2.0","id":6,"method":"session/load","params":{"sessionId":"` + childID + `"}}`},
		} {
			r.Handle(p.from, []byte(p.frame), nil)
		}
		from := pipe.Agent
		if fromClient {
			from = pipe.Client
		}
		in := bytes.Clone(frame)
		for _, o := range r.Handle(from, frame, nil) {
			if o.Op == "" && !bytes.Equal(o.Frame, in) {
				t.Fatalf("P1: a forwarded frame changed:\n%s\n%s", in, o.Frame)
			}
			if json.Valid(in) && !json.Valid(o.Frame) {
				t.Fatalf("invalid JSON written for %s:\n%s", in, o.Frame)
			}
		}
	})
}

// TestZedInfoParse pins the scripted client's reading of Zed's key: as
// serde reads SubagentSessionInfo (message_start_index required and
// unsigned; message_end_index absent, null or unsigned), so that the
// recordings test cannot pass on a key Zed would ignore.
func TestZedInfoParse(t *testing.T) {
	tests := []struct {
		name, raw string
		ok        bool
	}{
		{"the proxy's", `{"session_id":"c","message_start_index":0}`, true},
		{"with an end", `{"session_id":"c","message_start_index":0,"message_end_index":3}`, true},
		{"null end", `{"session_id":"c","message_start_index":0,"message_end_index":null}`, true},
		{"no start", `{"session_id":"c"}`, false},
		{"negative start", `{"session_id":"c","message_start_index":-1}`, false},
		{"fractional start", `{"session_id":"c","message_start_index":0.5}`, false},
		{"string start", `{"session_id":"c","message_start_index":"0"}`, false},
		{"no session", `{"message_start_index":0}`, false},
		{"not an object", `"c"`, false},
	}
	for _, tc := range tests {
		if got := parseZedInfo([]byte(tc.raw)) != nil; got != tc.ok {
			t.Errorf("%s: parsed = %v, want %v", tc.name, got, tc.ok)
		}
	}
}

// TestZ2KeptChildrenBounded: what the proxy keeps of child threads is
// bounded (P6): past 16 MiB on a connection the oldest child goes first:
// its load then gets only what the replay brought (the prompt) and {},
// never an error; the newest child is still served whole; a child the
// proxy never made gets an empty thread and {}.
func TestZ2KeptChildrenBounded(t *testing.T) {
	r, err := route.NewRouter(route.RouterConfig{Modules: modules(), Version: "0"})
	if err != nil {
		t.Fatal(err)
	}
	r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"zed"}}}`), nil)
	r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`), nil)
	text := strings.Repeat("x", 256<<10)
	const children, chunks = 6, 12 // 3 MiB per child: 18 MiB in all
	const childPrefix = "acp-normalize-subagent-"
	var ids []string
	for i := range children {
		tc := fmt.Sprintf("toolu_%d", i)
		r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"`+tc+`","title":"t","rawInput":{"prompt":"p"},"_meta":{"claudeCode":{"toolName":"Agent"}}}}}`), nil)
		for range chunks {
			r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`+text+`"},"_meta":{"claudeCode":{"parentToolUseId":"`+tc+`"}}}}}`), nil)
		}
	}
	// Reopen: the agent replays the launch calls only, so the children
	// hold what was kept live.
	r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s1"}}`), nil)
	for i := range children {
		outs := r.Handle(pipe.Agent, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"toolu_%d","title":"t","rawInput":{"prompt":"p"},"_meta":{"claudeCode":{"toolName":"Agent"}}}}}`, i)), nil)
		id, _ := rawjson.LookupString(outs[0].Frame, "params", "update", "_meta", "subagent_session_info", "session_id")
		ids = append(ids, id)
	}
	r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), nil)
	load := func(id string) []route.Out {
		return r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"`+id+`"}}`), nil)
	}
	oldest, newest := load(ids[0]), load(ids[children-1])
	if len(oldest) != 2 || !bytes.Contains(oldest[0].Frame, []byte(`"user_message_chunk"`)) || string(oldest[1].Frame) != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Errorf("the oldest child, dropped, gave %d frames: want the prompt and {}", len(oldest))
	}
	if unknown := load(childPrefix + "000000000000000000000000"); len(unknown) != 1 || string(unknown[0].Frame) != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Errorf("an unknown child gave %d frames, want {} alone", len(unknown))
	}
	if len(newest) != 1+1+chunks || !bytes.HasSuffix(newest[len(newest)-1].Frame, []byte(`"result":{}}`)) {
		t.Errorf("the newest child gave %d frames, want the prompt, %d chunks and {}", len(newest), chunks)
	}
}
