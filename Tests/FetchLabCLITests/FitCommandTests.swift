import Foundation
import Testing

@Suite("fetchlab fit", .serialized)
struct FitCommandTests {
  @Test("fit: writes the model and reports, prints the comparison, byte-identical for any --jobs")
  func fitTwice() throws {
    let dir = scratch()
    let synth = try CLI.run(["synth", "--users", "5", "--days", "14", "--seed", "4", "--out", dir + "/t.csv"])
    #expect(synth.status == 0, "\(synth.stderr)")
    var outputs: [[Data?]] = []
    var stdouts: [String] = []
    for (i, jobs) in ["1", "3"].enumerated() {
      let r = try CLI.run([
        "fit", "--trace", dir + "/t.csv", "--out", dir + "/m\(i).json", "--report", dir + "/r\(i)",
        "--apps", "top:2", "--jobs", jobs,
      ])
      #expect(r.status == 0, "\(r.stderr)")
      stdouts.append(r.stdout.replacingOccurrences(of: dir + "/m\(i).json", with: "MODEL"))
      let reports: [String] = [
        "evaluation.csv", "evaluation_overall.csv", "calibration.csv", "device_evaluation.csv",
        "device_evaluation_overall.csv", "device_calibration.csv",
      ].map { dir + "/r\(i)/" + $0 }
      let files: [String] = [dir + "/m\(i).json"] + reports
      outputs.append(files.map { FileManager.default.contents(atPath: $0) })
      #expect(FileManager.default.fileExists(atPath: dir + "/r\(i)/manifest.json"))
    }
    #expect(outputs[0].allSatisfy { $0 != nil })
    #expect(outputs[0] == outputs[1])
    #expect(stdouts[0] == stdouts[1])
    let out = stdouts[0]
    #expect(out.hasPrefix("5 users, 10 (user, app) pairs; population model from 10 pairs, "), "\(out)")
    #expect(out.split(separator: "\n").first?.hasSuffix(" opens -> MODEL") == true, "\(out)")
    for p in [
      "habit", "hour_of_day", "hour_of_week", "last_seen_hour", "constant", "habit vs hour_of_day:", "outside_gaps",
      "device models", "plugged_within", "wifi_at", "offline_at", "level_change", "persistence", "state_frequency",
    ] {
      #expect(out.contains(p), "\(out)")
    }

    let model = try JSONSerialization.jsonObject(with: outputs[0][0]!) as! [String: Any]
    #expect(model["format"] as? String == "fetchlab-model")
    #expect(model["version"] as? Int == 2)
    #expect(model["train_fraction"] as? Double == 0.75)
    let users = model["users"] as! [[String: Any]]
    #expect(users.count == 5)
    #expect((users[0]["apps"] as! [Any]).count == 2)

    let evaluation = String(decoding: outputs[0][1]!, as: UTF8.self).split(separator: "\n")
    #expect(evaluation.first == "user,app,predictor,subset,train_opens,test_opens,test_h,loglik_nats_per_h,points,positives,brier,auc,log_loss_nats,mean_predicted,observed_rate")
    #expect(evaluation.count == 1 + 10 * 5 * 2)
    let overall = String(decoding: outputs[0][2]!, as: UTF8.self).split(separator: "\n")
    #expect(overall.count == 1 + 5 * 2)
    let calibration = String(decoding: outputs[0][3]!, as: UTF8.self).split(separator: "\n")
    #expect(calibration.first == "predictor,subset,decile,n,mean_predicted,observed")
    #expect(calibration.count == 1 + 5 * 2 * 10)
    // Device models: 5 users × 2 subsets × (3 binary targets + level) × 6 predictors.
    let device = String(decoding: outputs[0][4]!, as: UTF8.self).split(separator: "\n")
    #expect(device.first == "user,subset,target,predictor,points,positives,brier,auc,log_loss_nats,mean_predicted,observed_rate,mae,rmse,bias")
    #expect(device.count == 1 + 5 * 2 * 4 * 6)
    let deviceOverall = String(decoding: outputs[0][5]!, as: UTF8.self).split(separator: "\n")
    #expect(deviceOverall.count == 1 + 2 * 4 * 6)
    #expect(users[0]["device"] is [String: Any])
    #expect(model["device_population"] is [String: Any])
  }

  @Test("fit scores the device models with and without the test points that a recording gap covers")
  func deviceScoresOutsideGaps() throws {
    let dir = scratch()
    let synth = try CLI.run(["synth", "--users", "3", "--days", "14", "--seed", "4", "--out", dir + "/full.csv"])
    #expect(synth.status == 0, "\(synth.stderr)")
    // Every row from day 11 to day 12.5 of each user's window removed: a
    // 36-h stretch of the test part (the last 3.5 days) with no recording.
    var start = 0.0
    var kept: [Substring] = []
    for line in try String(contentsOfFile: dir + "/full.csv", encoding: .utf8).split(separator: "\n") {
      let f = line.split(separator: ",", omittingEmptySubsequences: false)
      guard f.count >= 3, let t = Double(f[1]) else { kept.append(line); continue }
      if f[2] == "begin" { start = t }
      if f[2] != "begin" && f[2] != "end" && t > start + 11 * 86_400 && t < start + 12.5 * 86_400 { continue }
      kept.append(line)
    }
    try (kept.joined(separator: "\n") + "\n").write(toFile: dir + "/gap.csv", atomically: true, encoding: .utf8)
    let r = try CLI.run(["fit", "--trace", dir + "/gap.csv", "--out", dir + "/m.json", "--report", dir + "/r", "--apps", "top:1"])
    #expect(r.status == 0, "\(r.stderr)")
    let rows = try String(contentsOfFile: dir + "/r/device_evaluation_overall.csv", encoding: .utf8)
      .split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
    #expect(rows.first?.prefix(5) == ["subset", "target", "predictor", "users", "points"])
    // The covered windows come first; each has fewer points than all of them.
    #expect(rows.dropFirst().first?.first == "outside_gaps")
    func points(_ subset: String, _ target: String) -> Int? {
      rows.first { $0[0] == subset && $0[1] == target && $0[2] == "model" }.flatMap { Int($0[4]) }
    }
    for target in ["plugged_within", "wifi_at", "offline_at"] {
      let covered = try #require(points("outside_gaps", target)), all = try #require(points("all", target))
      // 36 h of 84 h, and the horizons that reach into the gap.
      #expect(covered > 0 && Double(covered) < 0.6 * Double(all), "\(target): \(covered) of \(all)")
    }
    #expect(r.stdout.contains("outside logging gaps (≥ 24 h without any row): "), "\(r.stdout)")
  }

  @Test("bad fit options exit 64 and write nothing", arguments: [
    (["--train-fraction", "1.5"], "--train-fraction must be in (0, 1)"),
    (["--apps", "most:3"], "bad app selection"),
    (["--jobs", "0"], "--jobs must be at least 1"),
  ])
  func badOptions(args: [String], fragment: String) throws {
    let dir = scratch()
    try smallTrace.write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
    let r = try CLI.run(["fit", "--trace", dir + "/t.csv", "--out", dir + "/m.json"] + args)
    #expect(r.status == 64, "\(r.stderr)")
    #expect(r.stderr.contains(fragment), "\(r.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/m.json"))
  }

  @Test("a trace too short to split exits 1 with a clear message and no model")
  func tooShort() throws {
    let dir = scratch()
    try smallTrace.write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
    let r = try CLI.run(["fit", "--trace", dir + "/t.csv", "--out", dir + "/m.json"])
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stderr.contains("no user has a usable window") || r.stderr.contains("population fit failed"), "\(r.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/m.json"))
  }
}
