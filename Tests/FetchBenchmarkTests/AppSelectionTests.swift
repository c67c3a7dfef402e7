import FetchSupport
import FetchTraces
import FetchWorld
import Foundation
import Testing

@testable import FetchBenchmark

/// Which apps a run replays: content apps by default, offline ones only by
/// name, and exclusion lists.
@Suite("App selection: content apps")
struct AppSelectionTests {
  /// One user: the dialer is opened most, then SMS, settings, a news app,
  /// mail, a game.
  static func trace() -> UserTrace {
    var t = UserTrace(user: "u1", start: 0, end: 86_400)
    let counts = [
      ("com.sec.android.app.dialertab", 50), ("com.android.mms", 40), ("com.android.settings", 30),
      ("com.google.android.apps.news", 20), ("com.google.android.gm", 10), ("com.rovio.gold", 5),
    ]
    var events: [TraceEvent] = []
    for (name, n) in counts {
      let a = t.appIndex(name)
      for k in 0..<n { events.append(TraceEvent(time: Double(k * 100 + Int(a)), kind: .open, app: a, value: 10)) }
    }
    t.events = events.sorted { $0.time < $1.time }
    return t
  }

  func names(_ s: String) throws -> [String] {
    let t = Self.trace()
    return try AppSelection(parsing: s).select(in: t).map { t.apps[Int($0)] }
  }

  @Test("top:K and min-opens:N skip apps of offline categories; names: replays any app named")
  func contentAppsOnly() throws {
    #expect(try names("top:3") == ["com.google.android.apps.news", "com.google.android.gm", "com.rovio.gold"])
    #expect(try names("min-opens:10") == ["com.google.android.apps.news", "com.google.android.gm"])
    #expect(try names("names:com.sec.android.app.dialertab,com.rovio.gold") == ["com.sec.android.app.dialertab", "com.rovio.gold"])
    // /offline restores the plain ranking over every app.
    #expect(try names("top:2/offline") == ["com.sec.android.app.dialertab", "com.android.mms"])
  }

  @Test("/except: removes apps from any selection; modifiers combine and print back as parsed")
  func exclusions() throws {
    #expect(try names("top:2/except:com.google.android.apps.news") == ["com.google.android.gm", "com.rovio.gold"])
    #expect(try names("top:2/offline/except:com.sec.android.app.dialertab,com.android.mms") == ["com.android.settings", "com.google.android.apps.news"])
    #expect(try names("names:com.android.mms,com.rovio.gold/except:com.rovio.gold") == ["com.android.mms"])
    for s in ["top:3", "top:2/except:a,b", "min-opens:5/offline", "names:x/except:y/offline"] {
      #expect(try AppSelection(parsing: s).description == s)
    }
  }

  @Test("bad modifiers are refused with a code naming the form")
  func badModifiers() {
    for (s, code) in [("top:3/", AppSelectionError.Code.unknownForm), ("top:3/except:", .noNames), ("top:3/sometimes", .unknownForm), ("top:0/offline", .badCount)] {
      #expect(throws: AppSelectionError.self, "\(s)") { try AppSelection(parsing: s) }
      do { _ = try AppSelection(parsing: s) } catch let e as AppSelectionError { #expect(e.code == code, "\(s)") } catch {}
    }
  }

  @Test("the default benchmark (experiments/default.json) replays no app of an offline category: summary.csv's apps")
  func defaultBenchmarkSummary() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    var e = try Experiment(contentsOf: root.appendingPathComponent("experiments/default.json").path, currentDirectory: "/")
    // Which apps are replayed does not depend on the policy or replication.
    e.configurations = Array(e.configurations.prefix(1))
    e.replications = 1
    let dir = tempDir()
    let o = try runExperiment(e, directory: dir, options: ExperimentOptions(jobs: 2))
    try o.commit(manifest: ["test": true])
    let rows = try String(contentsOfFile: dir + "/summary.csv", encoding: .utf8).split(separator: "\n").map {
      $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }
    let app = try #require(rows.first?.firstIndex(of: "app"))
    let dataset = try #require(rows.first?.firstIndex(of: "dataset"))
    let replayed = rows.dropFirst().map { ($0[dataset], $0[app]) }
    #expect(Set(replayed.map(\.0)) == ["ubiqlog", "synthetic"])
    let offline = replayed.filter { AppCategory($0.1) == .offline }
    #expect(offline.isEmpty, "offline apps replayed: \(Set(offline.map(\.1)).sorted())")
  }
}
