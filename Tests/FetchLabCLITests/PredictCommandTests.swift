import FetchSupport
import Foundation
import Testing

@Suite("fetchlab predict", .serialized)
struct PredictCommandTests {
  @Test("predict: Minimum fetch times from a fitted model, as a table or CSV; clear errors")
  func predict() throws {
    let dir = scratch()
    #expect(try CLI.run(["synth", "--users", "3", "--days", "14", "--seed", "9", "--out", dir + "/t.csv"]).status == 0)
    let fit = try CLI.run(["fit", "--trace", dir + "/t.csv", "--out", dir + "/m.json", "--apps", "top:1"])
    #expect(fit.status == 0, "\(fit.stderr)")
    let model = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/m.json"))) as! [String: Any]
    let user = (model["users"] as! [[String: Any]])[0]
    let app = (user["apps"] as! [[String: Any]])[0]["app"] as! String
    let split = user["split_s"] as! Double
    let args = [
      "predict", "--model", dir + "/m.json", "--user", user["user"] as! String, "--app", app,
      "--from", String(Int(split)), "--to", String(Int(split) + 86_400), "--trace", dir + "/t.csv",
    ]
    let table = try CLI.run(args)
    #expect(table.status == 0, "\(table.stderr)")
    #expect(table.stdout.hasPrefix("time  "))
    #expect(table.stdout.contains("fetches ("))
    let csv = try CLI.run(args + ["--csv", "--all"])
    #expect(csv.status == 0)
    let lines = csv.stdout.split(separator: "\n")
    #expect(lines.first == "time,launched,p_open,p_new,expected_age_s,benefit_j,cost_j,factor,p_plugged_1h,p_wifi_30m,p_offline_30m")
    #expect(lines.count > 100, "a day of 5-minute checks plus opportunities")
    // Every launch in the table is a launched row of the full CSV.
    let launched = lines.dropFirst().filter { $0.split(separator: ",")[1] == "1" }
    #expect(launched.count == table.stdout.split(separator: "\n").count - 2)
    let again = try CLI.run(args + ["--csv", "--all"])
    #expect(again.stdout == csv.stdout)

    // Without a trace: a forecast over seeded sample paths, the same for the same seed.
    let forecastArgs = Array(args.dropLast(2)) + ["--paths", "5"]
    let forecast = try CLI.run(forecastArgs)
    #expect(forecast.status == 0, "\(forecast.stderr)")
    #expect(forecast.stdout.hasPrefix("hour  "), "\(forecast.stdout)")
    #expect(forecast.stdout.contains("5 sample paths: "), "\(forecast.stdout)")
    let forecastCSV = try CLI.run(forecastArgs + ["--csv"])
    let forecastLines = forecastCSV.stdout.split(separator: "\n")
    #expect(forecastLines.first == "hour,opens_mean,opens_sd,launches_mean,launches_sd,share_wifi,share_plugged,mean_age_s")
    #expect(forecastLines.count == 1 + 24)
    #expect(try CLI.run(forecastArgs + ["--csv"]).stdout == forecastCSV.stdout)
    #expect(try CLI.run(forecastArgs + ["--csv", "--seed", "2"]).stdout != forecastCSV.stdout)

    let noUser = try CLI.run(["predict", "--model", dir + "/m.json", "--user", "nobody", "--app", app, "--from", "0", "--to", "100"])
    #expect(noUser.status == 1 && noUser.stderr.contains("user 'nobody' is not in"))
    let badTime = try CLI.run(["predict", "--model", dir + "/m.json", "--user", "x", "--app", app, "--from", "tomorrow", "--to", "100"])
    #expect(badTime.status == 64 && badTime.stderr.contains("ISO 8601"))
    let notModel = try CLI.run(["predict", "--model", dir + "/t.csv", "--user", "x", "--app", app, "--from", "0", "--to", "100"])
    #expect(notModel.status == 1 && notModel.stderr.contains("t.csv"))
  }
}
