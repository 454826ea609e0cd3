package client

// topicTable holds every topic subscribed on the server, by name and as a
// slice: a restore walks the slice, which for 100 topics costs a fraction
// of iterating a map. Order is not kept (removal swaps in the last entry);
// servers do not care in which order topics are restored. Client.mu
// protects it.
type topicTable struct {
	byName map[string]*topicState
	list   []*topicState
}

func newTopicTable() topicTable {
	return topicTable{byName: make(map[string]*topicState)}
}

func (t *topicTable) get(name string) *topicState { return t.byName[name] }

func (t *topicTable) len() int { return len(t.list) }

// all is every topic; the slice is the table's own, valid until the next
// add or remove.
func (t *topicTable) all() []*topicState { return t.list }

func (t *topicTable) add(ts *topicState) {
	ts.index = len(t.list)
	t.list = append(t.list, ts)
	t.byName[ts.name] = ts
}

// remove drops ts, which must be in the table (topicState.removed says
// whether it still is).
func (t *topicTable) remove(ts *topicState) {
	last := len(t.list) - 1
	moved := t.list[last]
	t.list[ts.index] = moved
	moved.index = ts.index
	t.list[last] = nil
	t.list = t.list[:last]
	delete(t.byName, ts.name)
}
