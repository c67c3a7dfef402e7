import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Testing

/// Every setting of every policy family is bounded, the bounds are shown,
/// and costly combinations within them are refused by the resource check.
@Suite("Policy setting bounds")
struct PolicySettingBoundsTests {
  @Test("every numeric setting of every family shows a finite upper bound")
  func everySettingIsBounded() {
    for f in PolicyRegistry.builtInFamilies {
      for s in f.settings {
        #expect(!s.range.hasPrefix("at least"), "\(f.name): \(s.name) accepts \(s.range)")
      }
    }
  }

  @Test(
    "horizons of ten years are refused, naming the setting and its range",
    arguments: ["planner:horizon=3650d", "imp:horizon=3650d", "ios-minimum:horizon=3650d", "ios-custom:1h,horizon=3650d"])
  func absurdHorizon(_ text: String) {
    #expect {
      try PolicySpec(parsing: text)
    } throws: { e in
      let m = (e as? PolicySpecError)?.message ?? ""
      return m.contains("horizon") && m.contains("7d")
    }
  }

  @Test("intervals, checks, counts and percentages past their bounds are refused; at the bound accepted")
  func atAndPastTheBound() throws {
    for (ok, bad) in [
      ("periodic:30d", "periodic:31d"), ("ios-custom:30d", "ios-custom:30d1s"), ("tailender:30d", "tailender:60d"),
      ("planner:check=1d", "planner:check=2d"), ("planner:step=1d,horizon=7d", "planner:step=1d1s,horizon=7d"),
      ("ios-minimum:launches=86400", "ios-minimum:launches=86401"), ("imp:energy_budget_pct=100", "imp:energy_budget_pct=101"),
      ("silent-push:expiration=30d", "silent-push:expiration=31d"), ("android-standby:rare_batches=86400", "android-standby:rare_batches=1e6"),
      ("oracle-budget:86400", "oracle-budget:86401"), ("transfer:discretionary,deadline=30d", "transfer:discretionary,deadline=31d"),
    ] {
      #expect(throws: Never.self, "\(ok)") { try PolicySpec(parsing: ok) }
      #expect(throws: PolicySpecError.self, "\(bad)") { try PolicySpec(parsing: bad) }
    }
  }

  @Test("the resource check refuses a week's horizon in one-minute steps, naming the settings; the defaults pass over ten years")
  func settingWorkIsChecked() throws {
    let limits = ResourceLimits()
    let costly = try #require(try PolicySpec(parsing: "planner:horizon=7d,step=1m").settingWork)
    // 10,080 bins, squared, at 288 checks a day.
    #expect(costly.stepsPerDay == 10_080.0 * 10_080 * 288)
    let m = try #require(
      limits.checkPolicyWork(stepsPerDay: costly.stepsPerDay, days: 2, policy: "planner:horizon=7d,step=1m", settings: costly.settings))
    #expect(m.contains("horizon=7d") && m.contains("step=1m") && m.contains("FETCHLAB_MAX_POLICY_STEPS"), "\(m)")
    for text in ["planner", "ios-minimum", "imp", "ios-custom:1h", "bg-app-refresh", "per-app:#1=planner;*=ios-minimum"] {
      let w = try #require(try PolicySpec(parsing: text).settingWork, "\(text)")
      #expect(limits.checkPolicyWork(stepsPerDay: w.stepsPerDay, days: 3650, policy: text, settings: w.settings) == nil, "\(text)")
    }
    #expect(try PolicySpec(parsing: "periodic:1h").settingWork == nil)
    // A horizon of 7 d at the default 5-min checks: 2,016 points a check.
    #expect(try PolicySpec(parsing: "imp:horizon=7d").settingWork?.stepsPerDay == 288 * 2_016)
  }
}
