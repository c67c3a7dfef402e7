import Foundation
import Testing

/// The Python package of this checkout, for `external` policy children.
private let pythonPath = packageRoot + "/python"

/// A Python program of the `external` protocol written to `dir/name`.
private func policyScript(_ dir: String, _ name: String, _ body: String) throws -> String {
  try write(body, dir, name)
}

/// A policy that appends every message it receives to `log`, answers the
/// handshake with `hello` and every decision with `{"fetch": <fetch>,
/// "next": now + 1800}`, `fetch` a Python expression of the message `m`.
private func recordingScript(_ dir: String, _ name: String, log: String, hello: String, fetch: String) throws -> String {
  try policyScript(dir, name, """
    import json, sys
    log = open(\(jsonLiteral(log)), "a")
    for line in sys.stdin:
        log.write(line); log.flush()
        m = json.loads(line)
        if m["type"] == "hello":
            print('\(hello)', flush=True)
        elif m["type"] == "decide":
            print(json.dumps({"fetch": \(fetch), "next": m["now"] + 1800}), flush=True)

    """)
}

/// The rule "fetch when the last open is an hour old" through `fetchlab.policy`.
private let staleAfterAnHour = """
  from fetchlab.policy import Policy, serve

  class StaleAfterAnHour(Policy):
      def decide(self, obs):
          last = self.last_open(obs)
          if obs.why == "open":
              return self.wait_until(obs.now + 3600)
          if obs.why == "timer" or (obs.why == "start" and obs.now - last >= 3600):
              return self.fetch(next=obs.now + 3600)
          if obs.why == "start":
              return self.wait_until(max(last + 3600, obs.now + 1))
          return None

  serve(StaleAfterAnHour)

  """

/// A child that answers the handshake and the device, then misbehaves at
/// its first decision as `misbehave` (Python statements; `m` is the message).
private func misbehaving(_ misbehave: String) -> String {
  """
  import json, sys, time
  sys.stderr.write("policy starting\\n"); sys.stderr.flush()
  for line in sys.stdin:
      m = json.loads(line)
      if m["type"] == "hello":
          print(json.dumps({"version": 1}), flush=True)
      elif m["type"] == "decide":
          sys.stderr.write("deciding at %r\\n" % m["now"]); sys.stderr.flush()
  \(misbehave.split(separator: "\n").map { "        " + $0 }.joined(separator: "\n"))

  """
}

private let env = ["PYTHONPATH": pythonPath]

@Suite("external policies: the protocol end to end", .serialized)
struct ExternalPolicyTests {
  @Test("a Python policy replays through the pipe: the same results for --jobs 1 and 3, at most one process per job")
  func roundTripAndJobs() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let script = try policyScript(d, "stale.py", "import os\nopen(os.path.join(\(jsonLiteral(d)), 'pid-%d' % os.getpid()), 'w').close()\n" + staleAfterAnHour)
    let policy = "external:cmd=python3 \(script)"
    var outputs: [[String: Data]] = []
    for jobs in ["1", "3"] {
      for f in (try? FileManager.default.contentsOfDirectory(atPath: d)) ?? [] where f.hasPrefix("pid-") {
        try FileManager.default.removeItem(atPath: d + "/" + f)
      }
      let r = try CLI.run(
        ["run", "--trace", t, "--policy", policy, "--policy", "periodic:1h", "--out", d + "/o" + jobs, "--jobs", jobs],
        environment: env)
      #expect(r.status == 0, "\(r.stderr)")
      let pids = try FileManager.default.contentsOfDirectory(atPath: d).filter { $0.hasPrefix("pid-") }
      #expect(pids.count >= 1 && pids.count <= Int(jobs)!, "jobs \(jobs): \(pids.count) processes")
      var res = results(d + "/o" + jobs)
      res["manifest.json"] = nil
      outputs.append(res)
      let summary = String(decoding: res["summary.csv"] ?? Data(), as: UTF8.self)
      #expect(summary.contains("external:cmd=python3"), "\(summary)")
    }
    #expect(!outputs[0].isEmpty && outputs[0] == outputs[1])
  }

  /// Runs `policy` where a finished run of `periodic:1h` lies, and in a
  /// fresh directory; both must fail with `expected` and the child's
  /// stderr, leaving the old result and no new directory.
  private func expectFailure(_ script: String, settings: String = "", _ expected: [String]) throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let s = try policyScript(d, "bad.py", script)
    let old = d + "/old"
    #expect(try CLI.run(["run", "--trace", t, "--policy", "periodic:1h", "--out", old]).status == 0)
    let before = results(old)
    for (out, force) in [(old, true), (d + "/fresh", false)] {
      let r = try CLI.run(
        ["run", "--trace", t, "--policy", "external:cmd=python3 \(s)\(settings)", "--out", out] + (force ? ["--force"] : []),
        environment: env)
      #expect(r.status == 1, "\(r.status) \(r.stderr)")
      for e in expected + ["external policy process 'python3 \(s)'", "its stderr ended with:", "policy starting"] {
        #expect(r.stderr.contains(e), "missing \(e) in: \(r.stderr)")
      }
      #expect(!r.stderr.contains("Fatal error"), "\(r.stderr)")
    }
    #expect(results(old) == before, "the old result changed")
    #expect(!FileManager.default.fileExists(atPath: d + "/fresh"), "a failed run left a result directory")
  }

  @Test("a reply that does not parse stops the run, quoting the line")
  func unparsableReply() throws {
    try expectFailure(misbehaving("print('fetch please', flush=True)"), ["sent a reply that does not parse: \"fetch please\"", "deciding at"])
  }

  @Test("a reply without a boolean fetch stops the run")
  func replyWithoutFetch() throws {
    try expectFailure(misbehaving("print(json.dumps({'next': m['now'] + 60}), flush=True)"), ["has no boolean \"fetch\""])
  }

  @Test("an ask-again time in the past stops the run")
  func answerInThePast() throws {
    try expectFailure(
      misbehaving("print(json.dumps({'fetch': False, 'next': m['now'] - 10}), flush=True)"),
      ["an ask-again time in the past", "is before now"])
  }

  @Test("a process that exits stops the run with its status and stderr")
  func exits() throws {
    try expectFailure(misbehaving("sys.stderr.write('giving up\\n'); sys.exit(3)"), ["exited with status 3", "giving up"])
  }

  @Test("a process that hangs past the timeout is stopped")
  func hangs() throws {
    let start = Date()
    try expectFailure(misbehaving("time.sleep(600)"), settings: ",timeout=1s", ["sent no reply within 1s (timeout)"])
    #expect(Date().timeIntervalSince(start) < 60)
  }

  @Test("a process that floods its output is stopped")
  func floods() throws {
    try expectFailure(misbehaving("while True: sys.stdout.write('x' * 65536)"), ["flooded its output"])
    try expectFailure(misbehaving("print('{\"fetch\": false}'); print('{\"fetch\": false}', flush=True)"), ["more than one line"])
  }

  /// A child that answers the handshake with `reply` and then reads on.
  private func answeringHandshake(_ reply: String) -> String {
    """
    import sys
    sys.stderr.write("policy starting\\n"); sys.stderr.flush()
    sys.stdin.readline()
    print('\(reply)', flush=True)
    sys.stdin.read()

    """
  }

  @Test("a process that speaks another protocol version is refused at the handshake")
  func version() throws {
    try expectFailure(
      answeringHandshake(#"{"version": 4}"#), ["speaks another protocol version", "FetchLab speaks version 1 or 2 or 3", "the handshake"])
  }

  @Test("a handshake whose ask is not a list of optional opportunities is refused")
  func badAsk() throws {
    try expectFailure(
      answeringHandshake(#"{"version": 2, "ask": ["timer"]}"#),
      ["sent a handshake reply that does not parse", "that is not a list of", "the handshake"])
  }

  @Test("a handshake whose tell is not a list of notes, or comes before version 3, is refused")
  func badTell() throws {
    try expectFailure(
      answeringHandshake(#"{"version": 3, "ask": [], "tell": ["network"]}"#),
      ["sent a handshake reply that does not parse", "has an \"tell\" that is not a list of \"opens\", \"outcomes\""])
    try expectFailure(
      answeringHandshake(#"{"version": 2, "tell": ["opens"]}"#), ["(\"tell\" is protocol version 3's)"])
  }

  @Test("a version 2 process asked at no open replays as one asked at every open, and is asked less")
  func askLess() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    var outputs: [[String: Data]] = []
    var counts: [Int] = []
    for (k, ask) in ["[\"open\", \"fetch_done\"]", "[]"].enumerated() {
      let log = d + "/decisions\(k)"
      // One path for both, so that the policy strings (and the seeds of
      // their bootstrap intervals) are the same.
      let script = try policyScript(d, "stale.py", staleAfterAnHour
        .replacingOccurrences(of: "class StaleAfterAnHour(Policy):", with: "class StaleAfterAnHour(Policy):\n    ask = \(ask == "[]" ? "()" : "(\"open\", \"fetch_done\")")\n    log = open(\(jsonLiteral(log)), 'a')")
        .replacingOccurrences(of: "    def decide(self, obs):\n", with: "    def decide(self, obs):\n        self.log.write(obs.why + '\\n'); self.log.flush()\n        if obs.why == 'timer' and obs.now < self.last_open(obs) + 3600:\n            return self.wait_until(max(self.last_open(obs) + 3600, obs.now + 1))\n"))
      let r = try CLI.run(
        ["run", "--trace", t, "--policy", "external:cmd=python3 \(script)", "--out", d + "/o\(k)", "--jobs", "1"],
        environment: env)
      #expect(r.status == 0, "\(r.stderr)")
      var res = results(d + "/o\(k)")
      res["manifest.json"] = nil
      outputs.append(res)
      counts.append(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count)
    }
    #expect(
      !outputs[0].isEmpty && outputs[0] == outputs[1],
      "differ: \(Set(outputs[0].keys).union(outputs[1].keys).filter { outputs[0][$0] != outputs[1][$0] }.sorted())")
    #expect(counts[1] < counts[0], "\(counts)")
  }

  @Test("nothing from the future crosses the pipe: messages up to t do not change when the trace after t does")
  func noFuture() throws {
    let d = scratch()
    let cut = 1_767_605_000.0
    // The same users; the second trace changes only what happens after
    // `cut`: session lengths, networks, and one more open per user.
    let a = fiveUserTrace
    var lines: [String] = []
    for l in a.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
      let f = l.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
      guard f.count == 5, let time = Double(f[1]), time > cut else {
        lines.append(l)
        continue
      }
      if f[2] == "open" {
        lines.append([f[0], f[1], f[2], f[3], "1"].joined(separator: ","))
      } else if f[2] == "network" {
        lines.append([f[0], f[1], f[2], f[3], "offline"].joined(separator: ","))
      } else {
        if f[2] == "end" { lines.append([f[0], String(time - 100), "open", "news", "5"].joined(separator: ",")) }
        lines.append(l)
      }
    }
    let b = lines.joined(separator: "\n")
    #expect(a != b)
    var logs: [[String]] = []
    for (k, text) in [a, b].enumerated() {
      let t = try write(text, d, "t\(k).csv")
      let log = d + "/log\(k).jsonl"
      let script = try recordingScript(
        d, "rec\(k).py", log: log, hello: #"{"version": 2, "ask": ["open"]}"#, fetch: "True")
      let r = try CLI.run(
        ["run", "--trace", t, "--policy", "external:cmd=python3 \(script)", "--out", d + "/o\(k)", "--jobs", "1",
         "--train-fraction", "0", "--set", "replay.scope=app"], environment: env)
      #expect(r.status == 0, "\(r.stderr)")
      logs.append(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init))
    }
    // Every time in a message is at or before its `now`; training opens
    // are before the window. The process does not ask at fetch ends, so
    // their outcomes come in the next message.
    var compared = 0
    var told = 0
    for log in logs {
      for line in log {
        let m = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        if m["type"] as? String == "decide" {
          let now = try #require(m["now"] as? Double)
          if let o = m["outcome"] as? [String: Any] {
            #expect((o["end"] as? Double ?? .infinity) <= now && (o["start"] as? Double ?? .infinity) <= now)
          }
          for o in m["outcomes"] as? [[String: Any]] ?? [] {
            #expect((o["end"] as? Double ?? .infinity) <= now && (o["start"] as? Double ?? .infinity) <= now)
            told += 1
          }
          #expect((m["opens"] as? [Double] ?? []).allSatisfy { $0 <= now })
          #expect(m["why"] as? String != "fetch_done")
          #expect(m["session_s"] == nil && m["value"] == nil)
        }
      }
    }
    // Each (device, app)'s decisions before `cut` are identical in both
    // runs. (Each app alone on its radio: at device scope the order of the
    // replayed apps, which `--apps` ranks by the whole window's opens,
    // decides which of two simultaneous fetches pays the radio's promotion.)
    func early(_ log: [String]) -> [String: [String]] {
      var out: [String: [String]] = [:]
      for line in log {
        guard let m = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
          m["type"] as? String == "decide", let now = m["now"] as? Double, now < cut,
          let device = m["device"] as? String, let app = m["app"] as? String
        else { continue }
        out[device + "/" + app, default: []].append(line)
      }
      return out
    }
    let (e0, e1) = (early(logs[0]), early(logs[1]))
    compared = e0.values.map(\.count).reduce(0, +)
    #expect(compared > 10 && e0 == e1, "\(compared) early decisions")
    #expect(told > 10, "\(told) outcomes told after the fact")
    #expect(logs[0] != logs[1], "the traces differ after the cut, so later messages must")
  }

  @Test("version 3's messages leave out only what holds its default, and what the process chose not to be told")
  func compactMessages() throws {
    let d = scratch()
    // User a with a battery that runs low (the low_battery gate) and a
    // charger, both in the replayed last quarter of the day.
    let trace = fiveUserTrace
      .replacingOccurrences(
        of: "a,1767590000,network,,wifi\n",
        with: "a,1767585000,battery,,80\na,1767590000,network,,wifi\na,1767595000,battery,,15\n")
      .replacingOccurrences(
        of: "a,1767640000,open,news,15\n", with: "a,1767640000,open,news,15\na,1767645000,charge_start,,\na,1767650000,charge_end,,\n")
    #expect(trace.contains("charge_end") && trace.contains("battery,,15"))
    let t = try write(trace, d, "t.csv")
    var logs: [[[String: Any]]] = []
    var outputs: [[String: Data]] = []
    for (k, hello) in [#"{"version": 2, "ask": []}"#, #"{"version": 3, "ask": [], "tell": ["opens"]}"#].enumerated() {
      let log = d + "/log\(k).jsonl"
      // The same path for both, so that the policy strings are the same.
      _ = try recordingScript(d, "rec.py", log: log, hello: hello, fetch: #"m["now"] % 7200 < 3600"#)
      let r = try CLI.run(
        ["run", "--trace", t, "--policy", "external:cmd=python3 \(d)/rec.py", "--out", d + "/o\(k)", "--jobs", "1"],
        environment: env)
      #expect(r.status == 0, "\(r.stderr)")
      var res = results(d + "/o\(k)")
      res["manifest.json"] = nil
      outputs.append(res)
      logs.append(
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap {
          try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["type"] as? String == "decide" })
    }
    #expect(!outputs[0].isEmpty && outputs[0] == outputs[1])
    #expect(logs[0].count == logs[1].count && logs[0].count > 20, "\(logs[0].count) against \(logs[1].count)")
    // Version 2's message, less what version 3 leaves out, is version 3's.
    var outcomes = 0
    for (m2, m3) in zip(logs[0], logs[1]) {
      var m = m2.filter { !["device", "budget", "outcomes"].contains($0.key) && !($0.value is NSNull) }
      outcomes += (m2["outcomes"] as? [Any])?.count ?? 0
      for key in ["charging", "fetch_in_flight"] where (m[key] as? Bool) == false { m[key] = nil }
      let gates = (m["gates"] as? [String: Bool] ?? [:]).filter(\.value)
      m["gates"] = gates.isEmpty ? nil : gates
      #expect(NSDictionary(dictionary: m) == NSDictionary(dictionary: m3), "\(m2) against \(m3)")
    }
    #expect(outcomes > 5, "\(outcomes) outcomes told to version 2")
    for key in ["charging", "battery_pct", "gates"] {
      #expect(logs[1].contains { $0[key] != nil }, "no version 3 message has \(key)")
    }
  }
}

/// `s` as a Python string literal.
private func jsonLiteral(_ s: String) -> String {
  "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}
