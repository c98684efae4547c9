"use client";

import { useEffect, useState } from "react";

/** How often the counter redraws; a quarter second keeps it from lagging a whole second. */
const TICK_MS = 250;

/** "Thinking… 4 s": how long the model has been quiet, counted from when the message went. */
export function Thinking() {
  const [seconds, setSeconds] = useState(0);
  useEffect(() => {
    const started = Date.now();
    const timer = setInterval(() => setSeconds(Math.floor((Date.now() - started) / 1000)), TICK_MS);
    return () => clearInterval(timer);
  }, []);
  return (
    <p className="text-sm text-muted" data-testid="thinking">
      {/* Announced once; the counter is for the eyes, not read out every second. */}
      <span role="status" className="animate-pulse">
        Thinking…
      </span>{" "}
      <span className="tabular-nums" aria-hidden="true" data-testid="thinking-seconds">
        {seconds} s
      </span>
    </p>
  );
}
