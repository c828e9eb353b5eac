package dns

// Prefetch starts resolving host in the background unless it is cached,
// being resolved or already queued, and returns at once. At most
// Config.MaxPrefetch prefetch resolutions run at a time; the rest wait in
// a FIFO queue of at most Config.MaxEntries names (beyond that, prefetches
// are dropped and counted; a later Lookup still resolves the name). Invalid
// names and IP literals are ignored. Failures are cached like Lookup's.
func (c *Cache) Prefetch(host string) {
	key, lit, err := canonicalHost(host)
	if err != nil || lit.IsValid() {
		return
	}
	now := c.now()
	// Hosts are prefetched far more often than they are new: answer the
	// common case under the read lock.
	c.mu.RLock()
	e := c.entries[key]
	fresh := e != nil && now.Before(e.expires)
	c.mu.RUnlock()
	if fresh {
		return
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if e := c.entries[key]; e != nil && now.Before(e.expires) {
		return
	}
	if _, ok := c.flights[key]; ok {
		return
	}
	if _, ok := c.queued[key]; ok {
		return
	}
	if len(c.queue)-c.qhead >= c.maxEntries {
		c.prefetchDropped.Add(1)
		return
	}
	c.queue = append(c.queue, key)
	c.queued[key] = struct{}{}
	c.prefetches.Add(1)
	if c.workers < c.maxPrefetch {
		c.workers++
		c.wg.Add(1)
		go c.prefetchWorker()
	}
}

// prefetchWorker resolves queued names one at a time until the queue is
// empty, so the number of workers bounds prefetch concurrency.
func (c *Cache) prefetchWorker() {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		if c.closed || c.qhead == len(c.queue) {
			c.workers--
			c.mu.Unlock()
			return
		}
		key := c.popLocked()
		_, f, _ := c.resolveLocked(key, c.now())
		c.mu.Unlock()
		if f != nil {
			<-f.done
		}
	}
}

func (c *Cache) popLocked() string {
	key := c.queue[c.qhead]
	c.queue[c.qhead] = ""
	c.qhead++
	delete(c.queued, key)
	switch {
	case c.qhead == len(c.queue):
		c.queue, c.qhead = c.queue[:0], 0
	case c.qhead >= 1024 && 2*c.qhead >= len(c.queue):
		// Reclaim the consumed front instead of letting append copy it.
		n := copy(c.queue, c.queue[c.qhead:])
		clear(c.queue[n:])
		c.queue, c.qhead = c.queue[:n], 0
	}
	return key
}
