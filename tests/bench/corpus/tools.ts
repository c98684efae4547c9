import { assistant, type Conversation, calls, results, system, toolRound, user } from "./types";

/** Tool calls and their JSON (or text) results, as assistant `tool_calls` + `tool` messages. */

const AGENT_SYSTEM =
  "You are an assistant with tools. Call a tool when it helps, never guess data a tool can fetch, and summarise tool results for the user instead of pasting them.";

const WEATHER = {
  location: { name: "Lyon", country: "FR", lat: 45.764, lon: 4.8357, timezone: "Europe/Paris" },
  current: {
    temp_c: 21.4,
    feels_like_c: 21.9,
    humidity: 58,
    wind_kph: 11.2,
    condition: "Partly cloudy",
  },
  forecast: [
    { date: "2025-06-12", min_c: 14.1, max_c: 26.3, rain_mm: 0, condition: "Sunny" },
    { date: "2025-06-13", min_c: 15.8, max_c: 24.0, rain_mm: 3.2, condition: "Light rain" },
    { date: "2025-06-14", min_c: 13.2, max_c: 22.7, rain_mm: 8.9, condition: "Thunderstorms" },
  ],
};

const SEARCH = {
  query: "postgres advisory locks vs select for update",
  results: [
    {
      title: "Explicit Locking — PostgreSQL Documentation",
      url: "https://www.postgresql.org/docs/current/explicit-locking.html",
      snippet:
        "PostgreSQL provides a means for creating locks that have application-defined meanings. These are called advisory locks, because the system does not enforce their use.",
    },
    {
      title: "When to use advisory locks in Postgres",
      url: "https://example.com/blog/postgres-advisory-locks",
      snippet:
        "Row locks protect rows; advisory locks protect ideas. Use them for singleton jobs, migrations and anything that is not a single row.",
    },
    {
      title: "SELECT FOR UPDATE SKIP LOCKED for job queues",
      url: "https://example.com/skip-locked-queues",
      snippet:
        "SKIP LOCKED lets many workers pull jobs from one table without blocking each other, which makes Postgres a perfectly good queue for modest workloads.",
    },
  ],
  total_results: 3,
  took_ms: 184,
};

const ROWS = {
  columns: ["id", "email", "plan", "seats", "mrr_cents", "created_at", "churned"],
  rows: [
    [1041, "ana@acme.io", "team", 12, 14400, "2024-02-11T09:14:03Z", false],
    [1042, "bo@globex.com", "pro", 1, 1500, "2024-02-11T10:02:44Z", true],
    [1057, "chen@initech.co", "enterprise", 240, 480000, "2024-03-01T16:45:10Z", false],
    [1063, "dee@umbrella.org", "team", 5, 6000, "2024-03-09T08:21:37Z", false],
    [1070, "eli@hooli.dev", "pro", 1, 1500, "2024-03-15T19:55:02Z", false],
    [1088, "fatima@stark.ind", "team", 31, 37200, "2024-04-02T12:00:00Z", true],
  ],
  row_count: 6,
  truncated: false,
};

const FILES = {
  path: "/srv/app",
  entries: [
    { name: "package.json", type: "file", size: 2143, modified: "2025-05-30T14:02:11Z" },
    { name: "src", type: "dir", size: 4096, modified: "2025-06-10T08:41:52Z" },
    { name: "tests", type: "dir", size: 4096, modified: "2025-06-09T17:20:05Z" },
    { name: "README.md", type: "file", size: 6620, modified: "2025-04-18T11:13:40Z" },
    { name: ".env.example", type: "file", size: 388, modified: "2025-03-02T09:00:31Z" },
    { name: "docker-compose.yml", type: "file", size: 1290, modified: "2025-05-21T22:47:18Z" },
  ],
};

const ISSUE = {
  id: 4812,
  title: "Export to CSV drops rows with commas in the name",
  state: "open",
  labels: [
    { name: "bug", color: "d73a4a" },
    { name: "export", color: "0e8a16" },
  ],
  author: { login: "mkowalski", association: "CONTRIBUTOR" },
  assignees: [],
  comments: [
    {
      author: "mkowalski",
      created_at: "2025-06-02T10:11:09Z",
      body: "Steps: create a customer named `Smith, John`, export the list, open in Excel. The row is split across two columns and the last column is lost.",
    },
    {
      author: "lena-dev",
      created_at: "2025-06-03T08:47:51Z",
      body: "Confirmed on main. The exporter joins fields with ',' without quoting. We should use the csv module instead of string concatenation.",
    },
  ],
  reactions: { "+1": 7, eyes: 2 },
};

export const TOOLS: readonly Conversation[] = [
  {
    name: "tool-weather",
    category: "tool-json",
    messages: [
      system(AGENT_SYSTEM),
      user("What's the weather in Lyon this week? I'm planning a picnic."),
      ...toolRound(
        "call_Qm3v8TzK1pLx0aRw7YbN2cDe",
        "get_weather",
        { city: "Lyon", days: 3 },
        WEATHER,
      ),
      assistant(
        "Thursday looks best for a picnic: sunny, 14–26 °C and no rain. Friday brings light rain and Saturday thunderstorms, so I'd avoid those.",
      ),
    ],
  },
  {
    name: "tool-web-search",
    category: "tool-json",
    messages: [
      user("Should I use advisory locks or SELECT FOR UPDATE for a job queue in Postgres?"),
      ...toolRound(
        "call_9fJk2LmN4pQr6StU8vWx0yZa",
        "web_search",
        { query: "postgres advisory locks vs select for update", max_results: 3 },
        SEARCH,
        "Let me look that up.",
      ),
      assistant(
        "For a job queue, `SELECT … FOR UPDATE SKIP LOCKED` is the usual choice: each worker locks the row it takes and others skip it without waiting. Advisory locks fit better for things that aren't a single row, such as making sure only one instance runs a nightly migration.",
      ),
      user("Can you show me the SKIP LOCKED query?"),
    ],
  },
  {
    name: "tool-sql-rows",
    category: "tool-json",
    messages: [
      system(AGENT_SYSTEM),
      user("Which customers signed up in Q1 and have churned?"),
      ...toolRound(
        "call_Ab12Cd34Ef56Gh78Ij90Kl12",
        "run_sql",
        {
          sql: "SELECT id, email, plan, seats, mrr_cents, created_at, churned FROM customers WHERE created_at < '2024-04-30' ORDER BY id",
        },
        ROWS,
      ),
      assistant(
        "Only one customer from Q1 has churned: bo@globex.com (Pro plan, 1 seat, signed up 11 February). fatima@stark.ind also churned, but signed up on 2 April, so in Q2.",
      ),
    ],
  },
  {
    name: "tool-parallel-calls",
    category: "tool-json",
    messages: [
      user("List the files in /srv/app and show me the open issue about CSV export."),
      calls([
        { id: "call_Zx98Yw76Vu54Ts32Rq10Po98", name: "list_files", input: { path: "/srv/app" } },
        {
          id: "call_Nm13Lk24Jh35Gf46Ds57Ap68",
          name: "get_issue",
          input: { repo: "acme/app", number: 4812 },
        },
      ]),
      results([
        { id: "call_Zx98Yw76Vu54Ts32Rq10Po98", name: "list_files", output: FILES },
        { id: "call_Nm13Lk24Jh35Gf46Ds57Ap68", name: "get_issue", output: ISSUE },
      ]),
      assistant(
        "/srv/app has package.json, README.md, .env.example, docker-compose.yml and the src/ and tests/ directories. Issue #4812 is open: the CSV exporter joins fields with commas without quoting them, so names like “Smith, John” break the row. Nobody is assigned yet; the suggested fix is to use a proper CSV writer.",
      ),
      user("Assign it to me and add a comment that I'm on it."),
    ],
  },
  {
    name: "tool-error-result",
    category: "tool-json",
    messages: [
      user("Fetch https://internal.example.com/status and tell me if it's healthy."),
      ...toolRound(
        "call_Er0rEr0rEr0rEr0rEr0rEr0r",
        "fetch_url",
        { url: "https://internal.example.com/status", timeout_ms: 5000 },
        "Error: connect ETIMEDOUT 10.20.4.17:443 after 5000 ms (attempt 3 of 3)",
      ),
      assistant(
        "I couldn't reach it: the connection to 10.20.4.17:443 timed out three times. That address is on a private network, so it may only be reachable over your VPN.",
      ),
    ],
  },
  {
    name: "tool-multi-step",
    category: "tool-json",
    messages: [
      system(AGENT_SYSTEM),
      user("Convert 250 EUR to JPY and tell me what that buys in Tokyo for lunch."),
      ...toolRound(
        "call_Fx01Fx02Fx03Fx04Fx05Fx06",
        "convert_currency",
        { amount: 250, from: "EUR", to: "JPY" },
        {
          amount: 250,
          from: "EUR",
          to: "JPY",
          rate: 162.37,
          result: 40592.5,
          as_of: "2025-06-11T06:00:00Z",
        },
      ),
      ...toolRound(
        "call_Lu01Lu02Lu03Lu04Lu05Lu06",
        "web_search",
        { query: "average lunch price Tokyo 2025 yen", max_results: 2 },
        {
          results: [
            {
              title: "How much does lunch cost in Tokyo?",
              url: "https://example.com/tokyo-lunch",
              snippet:
                "A set lunch (teishoku) typically costs ¥900–¥1,500; ramen ¥800–¥1,200; a convenience-store bento ¥500–¥700.",
            },
            {
              title: "Tokyo on a budget",
              url: "https://example.com/tokyo-budget",
              snippet:
                "Lunch specials at sit-down restaurants are much cheaper than the same food at dinner.",
            },
          ],
        },
      ),
      assistant(
        "250 EUR is about ¥40,600 at today's rate of 162.37. With set lunches at ¥900–¥1,500, that's roughly 27 to 45 sit-down lunches, or around 60 convenience-store bentos.",
      ),
    ],
  },
  {
    name: "tool-nested-config",
    category: "tool-json",
    messages: [
      user("What does our production deployment config look like?"),
      ...toolRound(
        "call_Cf9gCf9gCf9gCf9gCf9gCf9g",
        "read_config",
        { environment: "production", format: "json" },
        {
          service: "billing-api",
          replicas: { min: 3, max: 12, target_cpu_pct: 65 },
          resources: {
            requests: { cpu: "250m", memory: "512Mi" },
            limits: { cpu: "1", memory: "1Gi" },
          },
          env: {
            DATABASE_POOL_SIZE: "20",
            LOG_LEVEL: "info",
            FEATURE_FLAGS: "invoices_v2,tax_engine,eu_vat_oss",
            OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel-collector.observability:4317",
          },
          probes: {
            liveness: { path: "/healthz", period_s: 10, failure_threshold: 3 },
            readiness: { path: "/readyz", period_s: 5, failure_threshold: 2 },
          },
          ingress: { host: "billing.example.com", tls: true, rate_limit_rps: 200 },
        },
      ),
      assistant(
        "billing-api runs 3–12 replicas, scaling at 65 % CPU, each with 250m CPU / 512 MiB requested and limits of 1 CPU / 1 GiB. It has liveness and readiness probes, a pool of 20 database connections, three feature flags on (invoices_v2, tax_engine, eu_vat_oss), and is exposed over TLS at billing.example.com with a 200 req/s rate limit.",
      ),
    ],
  },
];
