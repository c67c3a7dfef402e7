import Foundation
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

@Suite("fetchlab report", .serialized)
struct ReportCommandTests {
  /// synth + run (with or without event files); returns the run directory.
  static func smallRun(events: Bool) throws -> String {
    let dir = scratch()
    let synth = try CLI.run(["synth", "--users", "6", "--days", "3", "--seed", "7", "--out", dir + "/t.csv"])
    #expect(synth.status == 0, "\(synth.stderr)")
    let run = try CLI.run(
      [
        "run", "--trace", dir + "/t.csv", "--policy", "never", "--policy", "periodic:1h", "--policy", "periodic:4h",
        "--policy", "oracle", "--apps", "top:2", "--train-fraction", "0", "--out", dir + "/run",
      ] + (events ? [] : ["--no-event-files"]))
    #expect(run.status == 0, "\(run.stderr)")
    return dir + "/run"
  }

  static func wellFormed(_ data: Data) -> Bool { XMLParser(data: data).parse() }

  static func outputs(_ run: String) throws -> [String: Data] {
    var out: [String: Data] = [:]
    for f in ["report.html", "report.md"] { out[f] = try Data(contentsOf: URL(fileURLWithPath: run + "/" + f)) }
    for f in try FileManager.default.contentsOfDirectory(atPath: run + "/plots") {
      out["plots/" + f] = try Data(contentsOf: URL(fileURLWithPath: run + "/plots/" + f))
    }
    return out
  }

  @Test("report: SVGs, one self-contained report.html, report.md; same bytes twice")
  func endToEnd() throws {
    let run = try Self.smallRun(events: true)
    let r = try CLI.run(["report", run])
    #expect(r.status == 0, "\(r.stderr)")
    let first = try Self.outputs(run)
    let timeline = try #require(first.keys.first { $0.hasPrefix("plots/timeline-u00001-") && $0.hasSuffix(".svg") })
    let svgs = [
      "plots/staleness-energy.svg", "plots/fresh-energy.svg", "plots/staleness-cellular.svg", "plots/user-age-cdf.svg",
      "plots/age-cdf.svg", "plots/hour-of-day.svg", timeline,
    ]
    #expect(Set(first.keys) == Set(svgs + ["report.html", "report.md"]))
    for s in svgs {
      #expect(Self.wellFormed(try #require(first[s])), "\(s) is not well-formed XML")
      #expect(r.stdout.contains(run + "/" + s))
    }
    // The trace is found through the manifest, so hours are the users' local hours.
    #expect(String(decoding: try #require(first["plots/hour-of-day.svg"]), as: UTF8.self).contains("local time, from the trace"))
    let html = String(decoding: try #require(first["report.html"]), as: UTF8.self)
    #expect(html.components(separatedBy: "<svg ").count - 1 == 7)
    // The per-user distribution names its policies and counts users.
    let users = String(decoding: try #require(first["plots/user-age-cdf.svg"]), as: UTF8.self)
    #expect(users.contains("users with mean age ≤ x (%)") && users.contains("never"))
    #expect(!html.contains("src=") && !html.contains("href="), "self-contained")
    #expect(html.contains("<pre>{") && html.contains("&quot;policies&quot;"))
    #expect(html.contains("<td>periodic:1h</td><td>6</td>"))
    let md = String(decoding: try #require(first["report.md"]), as: UTF8.self)
    for s in svgs { #expect(md.contains("](\(s))")) }
    #expect(md.contains("| periodic:4h | 6 | "))
    // The oracle's energy CI is in the table as "mean [lo, hi]".
    #expect(md.range(of: #"\| oracle \| 6 \| [0-9.]+ \\\[[0-9.]+, [0-9.]+\\\]"#, options: .regularExpression) != nil)

    let again = try CLI.run(["report", run])
    #expect(again.status == 0)
    #expect(try Self.outputs(run) == first)
  }

  @Test("report.html: no page style reaches into the charts; CIs on a line of their own; one unit per column")
  func pageStyle() throws {
    let run = try Self.smallRun(events: true)
    let r = try CLI.run(["report", run])
    #expect(r.status == 0, "\(r.stderr)")
    let html = try String(contentsOfFile: run + "/report.html", encoding: .utf8)
    let css = try #require(html.components(separatedBy: "<style>").dropFirst().first?.components(separatedBy: "</style>").first)
    // Every class selector names its HTML element (p.note, td span.ci): SVG
    // text of the same class (the charts' notes) keeps its own size.
    let bareClass = try NSRegularExpression(pattern: #"(^|[\s,{>+~])\.[A-Za-z]"#, options: [.anchorsMatchLines])
    let selectors = css.components(separatedBy: "}").map { $0.components(separatedBy: "{").dropLast().joined(separator: "{") }
    for sel in selectors where !sel.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("@media") {
      #expect(bareClass.firstMatch(in: sel, range: NSRange(sel.startIndex..., in: sel)) == nil, "bare class selector in \(sel)")
    }
    #expect(html.contains("<text class=\"note\""), "the charts' notes")
    #expect(html.contains("<span class=\"ci\">["))
    // Durations: the unit in the column's header, none in its cells.
    #expect(html.contains("user-mean age (") && html.contains("J per app-day"))
    for unit in [" s", " min", " h", " days"] {
      #expect(!html.contains(unit + "<span class=\"ci\">") && !html.contains(unit + "]</span>"), "a cell with \(unit)")
    }
  }

  @Test("report without event files: the trade-off and per-user charts, with a note; bad input: exit 1, file:line")
  func noEventsAndErrors() throws {
    let run = try Self.smallRun(events: false)
    let r = try CLI.run(["report", run])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stderr.contains("no opens.csv"))
    let files = try FileManager.default.contentsOfDirectory(atPath: run + "/plots").sorted()
    #expect(files.count == 5 && files.prefix(3) == ["fresh-energy.svg", "staleness-cellular.svg", "staleness-energy.svg"])
    #expect(files.contains("user-age-cdf.svg"))
    #expect(files.contains { $0.hasPrefix("timeline-u00001-") })
    let md = try String(contentsOfFile: run + "/report.md", encoding: .utf8)
    #expect(md.contains("no opens.csv"))

    let path = run + "/policies.csv"
    var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
    lines[2] = lines[2].replacingOccurrences(of: ",", with: ";")[...]
    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    let bad = try CLI.run(["report", run])
    #expect(bad.status == 1)
    #expect(bad.stderr.contains(path + ":3: "), "\(bad.stderr)")
    try FileManager.default.removeItem(atPath: path)
    let missing = try CLI.run(["report", run])
    #expect(missing.status == 1)
    #expect(missing.stderr.contains(path + ": "), "\(missing.stderr)")
  }

  @Test("--timeline-*: the requested user, day and policies; bad requests exit 1 naming the option")
  func timelineOptions() throws {
    let run = try Self.smallRun(events: true)
    let r = try CLI.run([
      "report", run, "--timeline-user", "u00002", "--timeline-day", "2026-01-06", "--timeline-policy", "oracle",
      "--timeline-policy", "periodic:60m",
    ])
    #expect(r.status == 0, "\(r.stderr)")
    let path = run + "/plots/timeline-u00002-2026-01-06.svg"
    let svg = try String(contentsOfFile: path, encoding: .utf8)
    #expect(Self.wellFormed(Data(svg.utf8)))
    #expect(svg.contains("data-policy=\"oracle\"") && svg.contains("data-policy=\"periodic:1h\""))
    #expect(!svg.contains("data-policy=\"never\""))
    #expect(try String(contentsOfFile: run + "/report.md", encoding: .utf8).contains("(plots/timeline-u00002-2026-01-06.svg)"))
    let bad = try CLI.run(["report", run, "--timeline-policy", "imp"])
    #expect(bad.status == 1 && bad.stderr.contains("--timeline-policy imp"), "\(bad.stderr)")
    let none = try CLI.run(["report", run, "--no-timeline"])
    #expect(none.status == 0)
    let both = try CLI.run(["report", run, "--no-timeline", "--timeline-user", "u00001"])
    #expect(both.status == 64)
  }

  @Test("--policies: the charts show those configurations, the tables all; an unknown name exits 64 listing the valid ones")
  func chosenPolicies() throws {
    let run = try Self.smallRun(events: true)
    let r = try CLI.run(["report", run, "--no-timeline", "--policies", "never, oracle"])
    #expect(r.status == 0, "\(r.stderr)")
    for chart in ["staleness-energy", "age-cdf", "hour-of-day"] {
      let svg = try String(contentsOfFile: run + "/plots/\(chart).svg", encoding: .utf8)
      #expect(!svg.contains("periodic:1h") && !svg.contains("periodic (2)"), "\(chart) shows periodic")
    }
    #expect(try String(contentsOfFile: run + "/plots/staleness-energy.svg", encoding: .utf8).contains("<title>oracle</title>"))
    #expect(try String(contentsOfFile: run + "/report.html", encoding: .utf8).contains("<td>periodic:1h</td>"))
    let bad = try CLI.run(["report", run, "--no-timeline", "--policies", "never,periodic:2h"])
    #expect(bad.status == 64, "\(bad.stderr)")
    #expect(bad.stderr.contains("no policy 'periodic:2h'") && bad.stderr.contains("valid policies: never, periodic:1h"))
    #expect(try CLI.run(["report", run, "--policies", " , "]).status == 64)
  }

  @Test("more than 12 policies: the event charts keep the headline's, with a note; --policies overrides")
  func busyEventCharts() throws {
    let dir = scratch()
    let synth = try CLI.run(["synth", "--users", "4", "--days", "3", "--seed", "7", "--out", dir + "/t.csv"])
    #expect(synth.status == 0, "\(synth.stderr)")
    let intervals = ["10m", "15m", "20m", "30m", "45m", "1h", "90m", "2h", "3h", "4h", "6h", "8h"]
    let run = try CLI.run(
      ["run", "--trace", dir + "/t.csv", "--policy", "never", "--policy", "oracle", "--apps", "top:1",
       "--train-fraction", "0", "--out", dir + "/run"] + intervals.flatMap { ["--policy", "periodic:" + $0] })
    #expect(run.status == 0, "\(run.stderr)")
    #expect(try CLI.run(["report", dir + "/run", "--no-timeline"]).status == 0)
    for chart in ["age-cdf", "hour-of-day"] {
      let svg = try String(contentsOfFile: dir + "/run/plots/\(chart).svg", encoding: .utf8)
      #expect(svg.contains("<title>periodic:1h</title>") && !svg.contains("<title>periodic:45m</title>"), "\(chart)")
      #expect(svg.contains("of 14 policies") && svg.contains("--policies"), "\(chart)")
    }
    let asked = try CLI.run(["report", dir + "/run", "--no-timeline", "--policies", "periodic:45m"])
    #expect(asked.status == 0, "\(asked.stderr)")
    let svg = try String(contentsOfFile: dir + "/run/plots/age-cdf.svg", encoding: .utf8)
    #expect(svg.contains("<title>periodic:45m</title>") && !svg.contains("of 14 policies"))
  }

  @Test("report --help: hour of day in each user's local time, as the chart draws it")
  func helpLocalTime() throws {
    let help = try CLI.run(["report", "--help"])
    let text = help.stdout.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
    #expect(text.contains("by hour of day (each user's local time"), "\(text)")
    #expect(!text.contains("hour of day (UTC)"))
    #expect(text.contains("--policies"))
  }

  @Test("fit --report then report: the calibration chart, alone for a fit directory and beside a run's charts")
  func calibration() throws {
    let run = try Self.smallRun(events: false)
    let trace = (run as NSString).deletingLastPathComponent + "/t.csv"
    let fit = try CLI.run(["fit", "--trace", trace, "--out", run + "/fit/model.json", "--report", run + "/fit"])
    #expect(fit.status == 0, "\(fit.stderr)")
    let alone = try CLI.run(["report", run + "/fit"])
    #expect(alone.status == 0, "\(alone.stderr)")
    let svg = try Data(contentsOf: URL(fileURLWithPath: run + "/fit/plots/calibration.svg"))
    #expect(Self.wellFormed(svg))
    let text = String(decoding: svg, as: UTF8.self)
    for p in ["habit (Brier ", "hour_of_day (Brier ", "last_seen_hour (Brier ", "constant (Brier ", "perfectly calibrated"] {
      #expect(text.contains(">\(p)"), "legend \(p)")
    }
    let r = try CLI.run(["report", run])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: run + "/plots/calibration.svg")) == svg)
    #expect(try String(contentsOfFile: run + "/report.html", encoding: .utf8).contains(text))
  }
}
