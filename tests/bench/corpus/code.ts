import { assistant, type Conversation, system, user } from "./types";

/** Source code in several languages, pasted by the user or written by the assistant. */

const CODING_SYSTEM =
  "You are a senior software engineer. Prefer small, well-named functions, explain trade-offs briefly, and always show complete, runnable code.";

export const TS_DEBOUNCE = `export function debounce<A extends unknown[]>(
  fn: (...args: A) => void,
  waitMs: number,
): ((...args: A) => void) & { cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const debounced = (...args: A) => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      fn(...args);
    }, waitMs);
  };
  debounced.cancel = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  return debounced;
}`;

export const PY_LRU = `from collections import OrderedDict
from typing import Generic, Hashable, Optional, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """A fixed-size cache that evicts the least recently used entry."""

    def __init__(self, capacity: int) -> None:
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self._data: "OrderedDict[K, V]" = OrderedDict()

    def get(self, key: K) -> Optional[V]:
        if key not in self._data:
            return None
        self._data.move_to_end(key)
        return self._data[key]

    def put(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self.capacity:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)`;

export const RUST_WORDS = `use std::collections::HashMap;
use std::io::{self, BufRead};

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for line in stdin.lock().lines() {
        let line = line?;
        for word in line
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            *counts.entry(word.to_lowercase()).or_insert(0) += 1;
        }
    }
    let mut sorted: Vec<(&String, &usize)> = counts.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    for (word, count) in sorted.iter().take(10) {
        println!("{count:>8} {word}");
    }
    Ok(())
}`;

export const GO_SERVER = `package main

import (
	"encoding/json"
	"log"
	"net/http"
	"sync"
	"time"
)

type counter struct {
	mu    sync.Mutex
	hits  map[string]int
	start time.Time
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.hits[r.URL.Path]++
	snapshot := make(map[string]int, len(c.hits))
	for k, v := range c.hits {
		snapshot[k] = v
	}
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(map[string]any{
		"uptime": time.Since(c.start).Round(time.Second).String(),
		"hits":   snapshot,
	}); err != nil {
		log.Printf("encode: %v", err)
	}
}

func main() {
	c := &counter{hits: map[string]int{}, start: time.Now()}
	log.Fatal(http.ListenAndServe(":8080", c))
}`;

export const SQL_REPORT = `WITH monthly AS (
  SELECT
    date_trunc('month', o.created_at) AS month,
    c.country,
    sum(oi.quantity * oi.unit_price_cents) / 100.0 AS revenue
  FROM orders o
  JOIN customers c ON c.id = o.customer_id
  JOIN order_items oi ON oi.order_id = o.id
  WHERE o.status = 'paid'
    AND o.created_at >= now() - interval '12 months'
  GROUP BY 1, 2
)
SELECT
  month,
  country,
  revenue,
  revenue - lag(revenue) OVER (PARTITION BY country ORDER BY month) AS change
FROM monthly
ORDER BY month DESC, revenue DESC;`;

export const BASH_BACKUP = `#!/usr/bin/env bash
set -euo pipefail

SRC="\${1:?usage: backup.sh <dir> [dest]}"
DEST="\${2:-$HOME/backups}"
STAMP="$(date +%Y-%m-%d_%H%M%S)"
ARCHIVE="$DEST/$(basename "$SRC")_$STAMP.tar.gz"

mkdir -p "$DEST"
tar --exclude='node_modules' --exclude='.git' -czf "$ARCHIVE" -C "$(dirname "$SRC")" "$(basename "$SRC")"
echo "wrote $ARCHIVE ($(du -h "$ARCHIVE" | cut -f1))"

# keep the 7 most recent archives of this directory
ls -1t "$DEST"/"$(basename "$SRC")"_*.tar.gz | tail -n +8 | xargs -r rm --`;

export const C_RING = `#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *buf;
    size_t cap;  /* must be a power of two */
    size_t head; /* next write */
    size_t tail; /* next read */
} ring_t;

static inline size_t ring_len(const ring_t *r) { return r->head - r->tail; }

bool ring_push(ring_t *r, uint8_t byte) {
    if (ring_len(r) == r->cap) return false;
    r->buf[r->head++ & (r->cap - 1)] = byte;
    return true;
}

bool ring_pop(ring_t *r, uint8_t *out) {
    if (ring_len(r) == 0) return false;
    *out = r->buf[r->tail++ & (r->cap - 1)];
    return true;
}`;

const fence = (lang: string, code: string) => `\`\`\`${lang}\n${code}\n\`\`\``;

export const CODE: readonly Conversation[] = [
  {
    name: "code-typescript-debounce",
    category: "code",
    messages: [
      system(CODING_SYSTEM),
      user("Write a typed debounce helper in TypeScript that can be cancelled."),
      assistant(
        `Here is a small, fully typed version:\n\n${fence("ts", TS_DEBOUNCE)}\n\nThe generic \`A\` keeps the argument types of the wrapped function, and \`cancel()\` clears a pending call — useful in a React effect's cleanup.`,
      ),
      user("How would I use it for a search box in React?"),
    ],
  },
  {
    name: "code-python-lru",
    category: "code",
    messages: [
      user(
        `Can you review my LRU cache? I'm not sure the typing is right.\n\n${fence("python", PY_LRU)}`,
      ),
      assistant(
        "The logic is correct: `move_to_end` on every access keeps the most recent key at the end, and `popitem(last=False)` evicts from the front. Two small points: `get` returns `None` both for a missing key and for a stored `None`, so callers cannot tell them apart — consider a sentinel or raising `KeyError`; and on Python 3.9+ you can write `OrderedDict[K, V]` without the quotes.",
      ),
      user("Would functools.lru_cache be better?"),
    ],
  },
  {
    name: "code-rust-word-count",
    category: "code",
    messages: [
      user("Write a Rust program that prints the 10 most common words read from stdin."),
      assistant(
        `${fence("rust", RUST_WORDS)}\n\nRun it with \`cargo run --release < book.txt\`. Ties are broken alphabetically so the output is stable.`,
      ),
    ],
  },
  {
    name: "code-go-http",
    category: "code",
    messages: [
      system(CODING_SYSTEM),
      user(
        `This Go server sometimes reports wrong counts under load. Is there a race?\n\n${fence("go", GO_SERVER)}`,
      ),
      assistant(
        "No data race: every access to `hits` happens under the mutex, and you copy the map before releasing the lock, so encoding happens on a private snapshot. If counts look wrong, check whether browsers are also requesting `/favicon.ico` — those hits land in the same map. Run the server with `go run -race .` and a load test to be certain.",
      ),
      user("Good catch on the favicon. How do I exclude it?"),
    ],
  },
  {
    name: "code-sql-report",
    category: "code",
    messages: [
      user(
        "I need monthly revenue per country for the last year, with the change from the previous month. Tables: orders(id, customer_id, status, created_at), customers(id, country), order_items(order_id, quantity, unit_price_cents). Postgres.",
      ),
      assistant(
        `${fence("sql", SQL_REPORT)}\n\n\`lag()\` looks at the previous month for the same country; the first month of each country has a NULL change.`,
      ),
      user("Can you make months with no sales show up as zero instead of missing?"),
    ],
  },
  {
    name: "code-bash-backup",
    category: "code",
    messages: [
      user(
        "A bash script that tars a directory with a timestamp and keeps only the last 7 backups?",
      ),
      assistant(
        `${fence("bash", BASH_BACKUP)}\n\n\`set -euo pipefail\` stops on the first error; \`xargs -r\` does nothing when there is nothing to delete.`,
      ),
    ],
  },
  {
    name: "code-c-ring-buffer",
    category: "code",
    messages: [
      system(CODING_SYSTEM),
      user(
        `Is this lock-free single-producer single-consumer ring buffer safe?\n\n${fence("c", C_RING)}`,
      ),
      assistant(
        "Not as written. With one producer and one consumer on different threads, `head` and `tail` must be atomics with release/acquire ordering — otherwise the consumer may see the new `head` before the byte it guards is visible. Declare them `_Atomic size_t`, store `head` with `memory_order_release` after writing the byte, and load it with `memory_order_acquire` before reading. The power-of-two masking and the unsigned wrap-around are fine.",
      ),
      user("Show me the corrected version."),
    ],
  },
];
