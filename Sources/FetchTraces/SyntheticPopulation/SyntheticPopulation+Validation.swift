extension SyntheticPopulation.Parameters {
  /// Checks ranges and lengths; throws a ``SyntheticPopulation/ParameterError``
  /// naming the first bad parameter.
  public func validate() throws {
    try validateCalendarAndApps()
    try validateOpens()
    try validateSessionsAndWakes()
    try validateNetwork()
    try validateCharging()
  }

  private func check(_ ok: Bool, _ key: CodingKeys, _ why: String) throws {
    if !ok { throw SyntheticPopulation.ParameterError(.invalid(key.rawValue, why)) }
  }

  private func finite(_ xs: Double...) -> Bool { xs.allSatisfy(\.isFinite) }

  private func prob(_ x: Double) -> Bool { x >= 0 && x <= 1 }

  /// `x` finite and ≥ 0.
  private func nonNegative(_ x: Double, _ key: CodingKeys) throws {
    try check(finite(x) && x >= 0, key, "must be ≥ 0")
  }

  /// `x` finite and > 0.
  private func positive(_ x: Double, _ key: CodingKeys) throws {
    try check(finite(x) && x > 0, key, "must be > 0")
  }

  /// `x` finite and in `range` (the message writes its bounds as `0...1`).
  private func within(_ x: Double, _ range: ClosedRange<Double>, _ key: CodingKeys) throws {
    func text(_ b: Double) -> String { b == b.rounded() ? String(Int(b)) : String(b) }
    try check(
      finite(x) && x >= range.lowerBound && x <= range.upperBound, key,
      "must be in \(text(range.lowerBound))...\(text(range.upperBound))")
  }

  /// 24 hourly weights, non-negative, with a positive sum.
  private func curve(_ c: [Double]) -> Bool {
    c.count == 24 && c.allSatisfy { $0.isFinite && $0 >= 0 } && c.reduce(0, +) > 0
  }

  /// The calendar, time zones and the app pool.
  private func validateCalendarAndApps() throws {
    try check(
      SyntheticPopulation.civilDay(startDate) != nil, .startDate,
      "expected YYYY-MM-DD")
    try check(!timeZones.isEmpty, .timeZones, "needs at least one zone")
    for z in timeZones {
      guard case .fixed = TraceTimeZone(parsing: z) else {
        throw SyntheticPopulation.ParameterError(
          .invalid("timeZones", "'\(z)' is not a fixed offset +HH:MM"))
      }
    }
    try within(chronotypeSDHours, 0...4, .chronotypeSDHours)
    try check(!apps.isEmpty, .apps, "needs at least one app")
    try check(
      Set(apps.map(\.name)).count == apps.count, .apps,
      "app names must be unique")
    for a in apps {
      let ok =
        !a.name.isEmpty
        && finite(
          a.weight, a.peakHour, a.concentration, a.sessionScale,
          a.updatesPerHour, a.contentMedianBytes, a.contentSigma)
        && a.weight > 0 && a.concentration >= 0
        && a.concentration <= 20 && a.sessionScale > 0
        && a.updatesPerHour >= 0 && a.updatesPerHour <= 3_600
        && a.contentMedianBytes >= 0 && a.contentMedianBytes <= 1e11
        && a.contentSigma >= 0 && a.contentSigma <= 3
      try check(ok, .apps, "app '\(a.name)' has a bad name or value")
    }
    try check(
      appsPerUserMin >= 1 && appsPerUserMin <= appsPerUserMax,
      .appsPerUserMin, "must be in 1...appsPerUserMax")
    try check(
      appsPerUserMax <= apps.count, .appsPerUserMax,
      "must not exceed the \(apps.count) apps of the pool")
    try check(
      topAppShareMedian > 0 && topAppShareMedian < 1, .topAppShareMedian,
      "must be in (0, 1)")
    try nonNegative(topAppShareLogitSD, .topAppShareLogitSD)
  }

  /// How many opens, when, and in which pickups.
  private func validateOpens() throws {
    try within(opensPerDayMedian, 0...5_000, .opensPerDayMedian)
    try within(opensPerDayUserSigma, 0...3, .opensPerDayUserSigma)
    try within(opensPerDayDaySigma, 0...3, .opensPerDayDaySigma)
    try check(
      prob(lightDayProbability) && lightDayProbability < 1,
      .lightDayProbability, "must be in 0..<1")
    try check(
      finite(lightDayFactor) && lightDayFactor > 0 && lightDayFactor <= 1,
      .lightDayFactor, "must be in (0, 1]")
    try check(
      curve(openHourlyShare), .openHourlyShare,
      "needs 24 non-negative values with a positive sum")
    try nonNegative(weekendOpensFactor, .weekendOpensFactor)
    try within(weekendMorningDelayHours, -6...6, .weekendMorningDelayHours)
    try within(appsPerPickupMean, 1...50, .appsPerPickupMean)
    try within(repickupProbability, 0...0.95, .repickupProbability)
    try positive(repickupDelayMedianSeconds, .repickupDelayMedianSeconds)
    try nonNegative(repickupDelaySigma, .repickupDelaySigma)
    try within(appRepeatProbability, 0...1, .appRepeatProbability)
    try check(
      appRepeatMemory >= 1 && appRepeatMemory <= 100, .appRepeatMemory,
      "must be in 1...100")
    try positive(appSwitchMedianSeconds, .appSwitchMedianSeconds)
  }

  /// Session lengths, other apps' wakes and content updates.
  private func validateSessionsAndWakes() throws {
    try positive(sessionMedianSeconds, .sessionMedianSeconds)
    try nonNegative(sessionSigma, .sessionSigma)
    try nonNegative(sessionUserSigma, .sessionUserSigma)
    try within(sessionMaxSeconds, 1...86_400, .sessionMaxSeconds)
    try within(wakesPerHourMedian, 0...600, .wakesPerHourMedian)
    try nonNegative(wakesPerHourSigma, .wakesPerHourSigma)
    try nonNegative(wakeMinSeconds, .wakeMinSeconds)
    try check(
      finite(wakeMaxSeconds) && wakeMaxSeconds >= wakeMinSeconds
        && wakeMaxSeconds <= 86_400, .wakeMaxSeconds,
      "must be in wakeMinSeconds...86400")
    try check(updateTopApps >= 0, .updateTopApps, "must be ≥ 0")
    try check(
      curve(updateHourlyShape), .updateHourlyShape,
      "needs 24 non-negative values with a positive sum")
  }

  /// Network habits, commutes and location.
  private func validateNetwork() throws {
    try check(
      wifiFractionMedian > 0 && wifiFractionMedian < 1, .wifiFractionMedian,
      "must be in (0, 1)")
    try nonNegative(wifiFractionLogitSD, .wifiFractionLogitSD)
    try nonNegative(cellularDaySigma, .cellularDaySigma)
    try within(commuterShare, 0...1, .commuterShare)
    try within(workDayProbability, 0...1, .workDayProbability)
    try within(workWifiShare, 0...1, .workWifiShare)
    try check(
      finite(departHour) && departHour >= 0 && departHour < 24, .departHour,
      "must be in 0..<24")
    try check(
      finite(workdayHours) && workdayHours > 0 && workdayHours <= 16,
      .workdayHours, "must be in (0, 16]")
    try check(
      finite(commuteMedianMinutes) && commuteMedianMinutes > 0
        && commuteMedianMinutes <= 240, .commuteMedianMinutes,
      "must be in (0, 240]")
    try within(tunnelProbability, 0...1, .tunnelProbability)
    try positive(tunnelMedianMinutes, .tunnelMedianMinutes)
    try within(flightProbabilityPerDay, 0...1, .flightProbabilityPerDay)
    try within(significantChangeMinMinutes, 1...1440, .significantChangeMinMinutes)
    try within(significantChangeExtraMinutes, 0...1440, .significantChangeExtraMinutes)
    try within(outingMovingMinutes, 0...1440, .outingMovingMinutes)
    let shares = [lteShare, nr5gShare, umts3gShare]
    try check(
      shares.allSatisfy { $0.isFinite && $0 >= 0 }
        && shares.reduce(0, +) > 0, .lteShare,
      "lteShare, nr5gShare and umts3gShare must be ≥ 0 with a positive sum")
  }

  /// Charging habits and the battery.
  private func validateCharging() throws {
    try check(
      overnightChargeMedian > 0 && overnightChargeMedian < 1,
      .overnightChargeMedian, "must be in (0, 1)")
    try nonNegative(overnightChargeLogitSD, .overnightChargeLogitSD)
    try check(
      finite(bedtimeHour) && bedtimeHour >= 12 && bedtimeHour <= 30,
      .bedtimeHour, "must be in 12...30 (hours after the day's midnight)")
    try within(bedtimeSDHours, 0...4, .bedtimeSDHours)
    try within(wakeHour, 0...14, .wakeHour)
    try within(wakeSDHours, 0...4, .wakeSDHours)
    try within(weekendWakeDelayHours, -6...6, .weekendWakeDelayHours)
    try within(daytimePlugInsPerDayMedian, 0...100, .daytimePlugInsPerDayMedian)
    try nonNegative(daytimePlugInsSigma, .daytimePlugInsSigma)
    try check(
      finite(topUpPivotLevel) && topUpPivotLevel >= 0
        && topUpPivotLevel < 100, .topUpPivotLevel, "must be in 0..<100")
    try within(topUpLevelExponent, 0...20, .topUpLevelExponent)
    try check(
      curve(plugInHourlyShape), .plugInHourlyShape,
      "needs 24 non-negative values with a positive sum")
    try positive(daytimeChargeMedianHours, .daytimeChargeMedianHours)
    try nonNegative(daytimeChargeSigma, .daytimeChargeSigma)
    let r = lowBatteryThresholdRange
    try check(
      r.count == 2 && finite(r[0], r[1]) && r[0] >= 0 && r[0] <= r[1]
        && r[1] <= 100, .lowBatteryThresholdRange,
      "needs [low, high] with 0 ≤ low ≤ high ≤ 100")
    try positive(lowBatteryPlugInMinutes, .lowBatteryPlugInMinutes)
    try check(
      finite(forcedPlugInLevel) && forcedPlugInLevel >= 0
        && forcedPlugInLevel < 100, .forcedPlugInLevel, "must be in 0..<100")
    try nonNegative(idleDrainPercentPerHour, .idleDrainPercentPerHour)
    try nonNegative(activeDrainPercentPerHour, .activeDrainPercentPerHour)
    try nonNegative(drainSigma, .drainSigma)
    try positive(chargePercentPerMinute, .chargePercentPerMinute)
    try check(
      finite(chargeTaperFactor) && chargeTaperFactor > 0
        && chargeTaperFactor <= 1, .chargeTaperFactor, "must be in (0, 1]")
    try check(
      finite(batterySampleSeconds) && batterySampleSeconds >= 60,
      .batterySampleSeconds, "must be ≥ 60")
  }
}

extension SyntheticPopulation {
  /// A bad generator parameter: an unknown key or an out-of-range value.
  public struct ParameterError: Error, CustomStringConvertible, Equatable {
    enum Kind: Equatable {
      case unknownKey(String, context: String)
      case invalid(String, String)
    }
    let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    /// The offending key.
    public var key: String {
      switch kind {
      case .unknownKey(let k, _), .invalid(let k, _): k
      }
    }

    /// What is wrong, without the key (errors that name the key beside it).
    package var reason: String {
      switch kind {
      case .unknownKey(_, let context): "unknown \(context) key"
      case .invalid(_, let why): why
      }
    }

    /// What is wrong, naming the key.
    public var description: String {
      switch kind {
      case .unknownKey(let k, let context): "unknown \(context) '\(k)'"
      case .invalid(let k, let why): "parameter '\(k)': \(why)"
      }
    }
  }
}

extension SyntheticPopulation {
  /// A coding key for any string, to list the keys an object really has.
  struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  /// Throws ``SyntheticPopulation/ParameterError`` for the first key of the
  /// decoder's object that `Keys` does not know (in sorted order).
  static func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(
    _ decoder: any Decoder, _: Keys.Type, context: String
  ) throws {
    let all = try decoder.container(keyedBy: AnyCodingKey.self).allKeys
    let known = Set(Keys.allCases.map(\.stringValue))
    if let bad = all.map(\.stringValue).sorted().first(where: {
      !known.contains($0)
    }) {
      throw SyntheticPopulation.ParameterError(
        .unknownKey(bad, context: context))
    }
  }

  /// Days since 1970-01-01 of a proleptic Gregorian `YYYY-MM-DD`, or `nil`.
  ///
  /// See ``CivilDate``.
  static func civilDay(_ s: String) -> Int? {
    let parts = s.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].count == 4, parts[1].count == 2,
      parts[2].count == 2, let y0 = Int(parts[0]), let m = Int(parts[1]),
      let d = Int(parts[2]), (1...12).contains(m), d >= 1
    else { return nil }
    guard CivilDate.isValid(year: y0, month: m, day: d) else { return nil }
    return CivilDate.days(year: y0, month: m, day: d)
  }
}
