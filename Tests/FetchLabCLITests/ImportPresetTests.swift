import FetchTraces
import Foundation
import Testing
import FetchTestSupport

/// Runs the shell `script` in a fresh directory holding a copy of
/// docs/examples (what a clone has), with the built fetchlab first on PATH.
func runRecipe(_ script: String) throws -> (dir: String, status: Int32, stdout: String, stderr: String) {
  let dir = scratch()
  try FileManager.default.createDirectory(atPath: dir + "/docs", withIntermediateDirectories: true)
  try FileManager.default.copyItem(atPath: packageRoot + "/docs/examples", toPath: dir + "/docs/examples")
  try script.write(toFile: dir + "/commands.sh", atomically: true, encoding: .utf8)
  let p = Process()
  p.executableURL = URL(fileURLWithPath: "/bin/sh")
  p.arguments = ["-eu", "commands.sh"]
  p.currentDirectoryURL = URL(fileURLWithPath: dir)
  var env = ProcessInfo.processInfo.environment
  env["PATH"] = CLI.executable.deletingLastPathComponent().path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
  p.environment = env
  let out = Pipe(), err = Pipe()
  p.standardOutput = out
  p.standardError = err
  try p.run()
  let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  p.waitUntilExit()
  return (dir, p.terminationStatus, stdout, stderr)
}

/// The opens of each user of the trace at `path`: (user, app, time, length).
private func opens(_ path: String) throws -> [(String, String, Double, Double)] {
  let r = try TraceReader(path: path)
  var out: [(String, String, Double, Double)] = []
  while let u = try r.next() {
    for e in u.events where e.kind == .open { out.append((u.user, u.apps[Int(e.app)], e.time, e.value)) }
  }
  return out
}

@Suite("import-events presets: each collector's recipe in docs/own-data.md on a sample in its schema", .serialized)
struct ImportPresetTests {
  static func recipe(_ name: String) throws -> String {
    let page = try String(contentsOfFile: packageRoot + "/docs/own-data.md", encoding: .utf8)
    let block = try #require(section(page, from: "<!-- begin \(name) recipe -->", to: "<!-- end \(name) recipe -->"))
    return try #require(section(block, from: "```sh\n", to: "```"))
  }

  @Test("AWARE applications_foreground: a row is an open ending at the next foreground row; launcher, System UI and keyboard are no apps; devices map to participants; the zone table gives the zone")
  func aware() throws {
    let r = try runRecipe(try Self.recipe("aware"))
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stderr.contains("excluding 17 apps"), "\(r.stderr)")
    let got = try opens(r.dir + "/results/aware-opens.csv")
    // Worked by hand from docs/examples/aware/applications_foreground.csv.
    let want: [(String, String, Double, Double)] = [
      ("p01", "com.google.android.gm", 1_704_096_010, 60),  // ends at the keyboard row
      ("p01", "com.google.android.gm", 1_704_096_075, 60),  // ends at WhatsApp
      ("p01", "com.whatsapp", 1_704_096_135, 120),  // a repeated row continues it; ends at System UI
      ("p01", "com.android.chrome", 1_704_099_600, 300),  // ends at the launcher
      ("p02", "com.google.android.apps.maps", 1_704_124_800, 1_800),  // 2100 s, capped
      ("p02", "com.spotify.music", 1_704_127_000, 0),  // the device's last row: never closed
    ]
    #expect(got.map(\.0) == want.map(\.0) && got.map(\.1) == want.map(\.1))
    #expect(got.map(\.2) == want.map(\.2) && got.map(\.3) == want.map(\.3), "\(got)")
    #expect(r.stdout.contains("6 opens from 12 rows"), "\(r.stdout)")
    #expect(r.stdout.contains("1 merged opens") && r.stdout.contains("1 sessions never closed") && r.stdout.contains("1 capped at 1800 s"))
    #expect(r.stdout.contains("5 ended by the next app, 5 rows of excluded apps"), "\(r.stdout)")
    #expect(r.stdout.contains("sessions: 6, median 90 s"), "\(r.stdout)")
    let trace = try String(contentsOfFile: r.dir + "/results/aware-opens.csv", encoding: .utf8)
    #expect(trace.contains("p01,1704085200,begin,,America/New_York") && trace.contains("p02,1704063600,begin,,Europe/Berlin"), "\(trace)")
  }

  @Test("AWARE: the is_system_app trap is refused with the preset to use")
  func awareTrap() throws {
    let r = try CLI.run([
      "import-events", packageRoot + "/docs/examples/aware/applications_foreground.csv", "--out", scratch() + "/t.csv",
      "--user-column", "device_id", "--app-column", "package_name", "--event-column", "is_system_app", "--open-event", "0",
    ])
    #expect(r.status == 64, "\(r.stderr)")
    #expect(r.stderr.contains("drops every system app") && r.stderr.contains("--preset aware"), "\(r.stderr)")
  }

  @Test("UsageStatsManager: one file per device, resumed/paused by name or code, the other types skipped; a merge gap joins activity switches")
  func usageStats() throws {
    let r = try runRecipe(try Self.recipe("usagestats"))
    #expect(r.status == 0, "\(r.stderr)")
    let split = try opens(r.dir + "/results/usage-opens.csv")
    let want: [(String, String, Double, Double)] = [
      ("phone-a", "com.google.android.gm", 1_704_096_005.2, 24.8),
      ("phone-a", "com.google.android.gm", 1_704_096_030.3, 59.7),  // another activity of Gmail, 0.3 s later
      ("phone-a", "com.android.chrome", 1_704_096_100, 60),  // MOVE_TO_FOREGROUND / _BACKGROUND, the names before API 29
      ("phone-b", "com.whatsapp", 1_704_124_800, 45),  // codes 1 and 2
      ("phone-b", "com.spotify.music", 1_704_124_900, 120),  // ended by System UI's recents
    ]
    #expect(split.map(\.0) == want.map(\.0) && split.map(\.1) == want.map(\.1))
    #expect(split.map(\.2) == want.map(\.2) && split.map(\.3) == want.map(\.3), "\(split)")
    let merged = try opens(r.dir + "/results/usage-merged.csv")
    #expect(merged.count == 4 && merged[0].1 == "com.google.android.gm" && merged[0].3 == 84.8, "\(merged)")
    #expect(r.stdout.contains("1 merged opens"), "\(r.stdout)")
  }
}
