extension SyntheticPopulation {
  /// Every calibration knob of the generator.
  ///
  /// Each knob names the dataset statistic it is calibrated to, or is
  /// marked **NV** (not verified: a plausible placeholder to sweep). The
  /// "calibrated" figures are what the generator reproduces; see
  /// `SyntheticPopulationTests` for the checks. Decoding accepts any subset
  /// of the keys (the rest keep their defaults) and rejects unknown keys
  /// with a ``ParameterError`` naming the key.
  public struct Parameters: Sendable, Codable, Equatable {
    // MARK: Calendar and time zones

    /// Local date (`YYYY-MM-DD`) whose midnight starts every user's window.
    /// The default is a Monday.
    package var startDate = "2026-01-05"
    /// Fixed UTC offsets (`+HH:MM`) users are spread over uniformly (NV).
    package var timeZones = [
      "-08:00", "-05:00", "+00:00", "+01:00", "+02:00", "+05:30", "+08:00",
      "+09:00",
    ]
    /// Standard deviation of a user's chronotype, in hours: the shift of the
    /// user's daily rhythm (opens, bedtime, wake-up, commute), clamped to
    /// ±2.5 SD (NV).
    package var chronotypeSDHours = 0.75

    // MARK: App opens (UbiqLog; FALCON; Böhmer et al.)

    /// The app pool (NV; generic stand-ins for the UbiqLog app list).
    package var apps = App.defaultPool
    /// Fewest apps a user opens (NV).
    package var appsPerUserMin = 15
    /// Most apps a user opens (NV).
    package var appsPerUserMax = 35
    /// Median share of a user's opens going to the user's most-used app;
    /// UbiqLog: 34 %.
    package var topAppShareMedian = 0.34
    /// SD of logit(top-app share) across users; UbiqLog p10 15 %, p90 52 %
    /// give (logit .52 − logit .15) / 2.56 ≈ 0.7.
    package var topAppShareLogitSD = 0.7
    /// Median opens per active user-day; UbiqLog: 74. The generator solves for
    /// the median of its normal days so that, with light days mixed in, the
    /// pooled median is this value.
    package var opensPerDayMedian = 74.0
    /// SD of log(a user's typical opens/day) across users; with
    /// ``opensPerDayDaySigma``, light days and the clustering of opens,
    /// calibrated to the UbiqLog spread of opens per user-day (p10 20, p90 180).
    package var opensPerDayUserSigma = 0.5
    /// SD of log(opens/day) from day to day within a user; see
    /// ``opensPerDayUserSigma``.
    package var opensPerDayDaySigma = 0.35
    /// Chance that a day is a light day (little phone use); gives the long
    /// lower tail of UbiqLog (p10 20 while p90 is only 2.4 × the median).
    package var lightDayProbability = 0.1
    /// Opens on a light day relative to a normal day; see
    /// ``lightDayProbability``.
    package var lightDayFactor = 0.3
    /// Share of opens by local hour 00→23; UbiqLog, linearly
    /// interpolated between hour centres, shifted by the chronotype.
    package var openHourlyShare = [
      0.046, 0.020, 0.012, 0.009, 0.004, 0.005, 0.017, 0.025, 0.030, 0.041,
      0.051, 0.051, 0.057, 0.052, 0.050, 0.046, 0.046, 0.056, 0.058, 0.062,
      0.064, 0.061, 0.069, 0.068,
    ]
    /// Opens on Saturday and Sunday relative to weekdays (NV).
    package var weekendOpensFactor = 0.95
    /// How much later weekend mornings start, in hours; the delay fades out
    /// between noon and 20:00 (NV).
    package var weekendMorningDelayHours = 1.0
    /// Mean number of apps opened per device pickup (geometric, ≥ 1);
    /// calibrated to the UbiqLog any-app gaps (p50 1.8 min, p75 7.8 min,
    /// p90 29 min) together with the re-pickup knobs.
    package var appsPerPickupMean = 1.8
    /// Chance that a pickup is followed by another pickup after a short
    /// delay rather than by the next arrival of the daily rhythm (clustered
    /// phone checking); calibrated to the UbiqLog any-app gaps.
    package var repickupProbability = 0.6
    /// Median delay of such a re-pickup after the previous session ended, in
    /// seconds (log-normal); calibrated to the UbiqLog any-app gaps.
    package var repickupDelayMedianSeconds = 240.0
    /// Log-scale SD of the re-pickup delay; UbiqLog any-app gaps.
    package var repickupDelaySigma = 1.5
    /// Chance that a pickup starts with one of the last
    /// ``appRepeatMemory`` apps opened (continuing a conversation) rather
    /// than a fresh draw; keeps each app's share and is calibrated to the
    /// UbiqLog same-app gaps (p25 6.5 min, median 25 min, p75 163 min).
    package var appRepeatProbability = 0.6
    /// How many of the most recently opened apps a repeat picks from,
    /// uniformly; see ``appRepeatProbability``.
    package var appRepeatMemory = 5
    /// Median pause between closing one app and opening the next within a
    /// pickup, in seconds (log-normal, σ 0.7) (NV).
    package var appSwitchMedianSeconds = 4.0
    /// Median session length, in seconds, before app and user scaling;
    /// FALCON: 50 % of engagements < 30 s.
    package var sessionMedianSeconds = 27.0
    /// Log-scale SD of session lengths; FALCON: 90 % < 4 min gives
    /// ln(240/30) / 1.28 ≈ 1.6 in total, of which app and user scaling take
    /// part.
    package var sessionSigma = 1.45
    /// Log-scale SD of a user's session-length multiplier (NV).
    package var sessionUserSigma = 0.3
    /// Longest session, in seconds (NV).
    package var sessionMaxSeconds = 7_200.0

    // MARK: Wakes by other apps

    /// Median rate of background network wakes by other apps, per hour,
    /// homogeneous in time (NV).
    package var wakesPerHourMedian = 2.5
    /// Log-scale SD of the wake rate across users (NV).
    package var wakesPerHourSigma = 0.5
    /// Shortest wake, in seconds (NV).
    package var wakeMinSeconds = 1.0
    /// Longest wake, in seconds (NV); durations are uniform in between.
    package var wakeMaxSeconds = 10.0

    // MARK: Content updates

    /// How many of a user's most popular apps get `update` rows.
    package var updateTopApps = 5
    /// Relative update intensity by local hour 00→23, normalised to mean 1
    /// so ``App/updatesPerHour`` stays the daily average (NV: fewer at night).
    package var updateHourlyShape = [
      0.3, 0.2, 0.15, 0.15, 0.2, 0.4, 0.8, 1.2, 1.5, 1.5, 1.4, 1.3,
      1.3, 1.3, 1.3, 1.3, 1.3, 1.3, 1.3, 1.2, 1.2, 1.1, 0.8, 0.5,
    ]

    // MARK: Network (ExtraSensory)

    /// Median over users of the fraction of time on WiFi; ExtraSensory: 82 %.
    package var wifiFractionMedian = 0.82
    /// SD of logit(WiFi fraction) across users; ExtraSensory p10 63 %, p90 93 %
    /// give (logit .93 − logit .63) / 2.56 ≈ 0.8.
    package var wifiFractionLogitSD = 0.8
    /// Log-scale SD of a day's cellular time around the user's mean (NV).
    package var cellularDaySigma = 0.5
    /// Share of users who commute on weekdays (NV).
    package var commuterShare = 0.65
    /// Chance that a commuter goes to work on a given weekday (NV).
    package var workDayProbability = 0.85
    /// Share of commuters with WiFi at work (NV); the others stay on cellular
    /// at work when their WiFi fraction allows it.
    package var workWifiShare = 0.6
    /// Local hour commuters leave home, before the chronotype shift (NV).
    package var departHour = 8.0
    /// Hours between leaving for work and leaving work (NV).
    package var workdayHours = 9.0
    /// Median one-way commute, in minutes (log-normal: σ 0.4 across users,
    /// σ 0.3 from trip to trip) (NV).
    package var commuteMedianMinutes = 30.0
    /// Chance that a commute passes a dead zone (tunnel) (NV).
    package var tunnelProbability = 0.15
    /// Median dead-zone length, in minutes (log-normal, σ 0.6) (NV).
    package var tunnelMedianMinutes = 3.0
    /// Chance per user-day of a flight, offline 1–6 h (NV).
    package var flightProbabilityPerDay = 0.004
    /// Share of users whose cellular network is LTE (NV).
    package var lteShare = 0.75
    /// Share of users on 5G NR (NV).
    package var nr5gShare = 0.15
    /// Share of users on 3G UMTS (NV).
    package var umts3gShare = 0.10

    // MARK: Location (Apple Core Location documentation)

    /// Whether users get `location` rows: home/work region exits and
    /// entries around commutes and outings, significant changes on the
    /// move. Drawn from a stream of their own, after every other row, so
    /// the other rows are the same either way.
    package var locationWakes = true
    /// Shortest spacing of significant location changes, in minutes (M:
    /// "no more often than about every 5 min", Apple Core Location docs).
    package var significantChangeMinMinutes = 5.0
    /// Mean of the exponential extra spacing on top of the minimum, in
    /// minutes (NV: ~500 m per report at urban speeds).
    package var significantChangeExtraMinutes = 3.0
    /// Minutes of moving at each end of an outing (leaving home, coming
    /// back); the middle is stationary (NV).
    package var outingMovingMinutes = 15.0

    // MARK: Charging and battery (ExtraSensory)

    /// Median over users of the chance of charging overnight; calibrated to
    /// the ExtraSensory P(plugged) by hour (≈ .6–.7 at 02–05).
    package var overnightChargeMedian = 0.68
    /// SD of logit(overnight charge chance) across users (NV).
    package var overnightChargeLogitSD = 1.0
    /// Local hour of plugging in for the night, before the chronotype shift;
    /// ExtraSensory P(plugged) rises from .31 at 22:00 to .68 at 03:00.
    package var bedtimeHour = 23.5
    /// SD of the bedtime from night to night, in hours (NV).
    package var bedtimeSDHours = 1.2
    /// Local hour of unplugging in the morning, before the chronotype shift;
    /// ExtraSensory P(plugged) falls from .59 at 06:00 to .17 at 08:00.
    package var wakeHour = 7.0
    /// SD of the unplug time from day to day, in hours (NV).
    package var wakeSDHours = 0.6
    /// How much later people get up on Saturday and Sunday, in hours (NV).
    package var weekendWakeDelayHours = 1.0
    /// Median over users of planned daytime top-ups per day, before the
    /// level gate (``topUpPivotLevel``) drops some; with the overnight and
    /// low-battery charges, calibrated to ExtraSensory plug-ins per user-day median
    /// 2.5 (p10 0.8, p90 4.2).
    package var daytimePlugInsPerDayMedian = 4.5
    /// Log-scale SD of the daytime plug-in rate across users (NV).
    package var daytimePlugInsSigma = 0.8
    /// Battery level at which a planned daytime top-up surely happens; above
    /// it the chance falls as ((100 − level) / (100 − pivot))^exponent, so
    /// people top up when the battery is low. With
    /// ``topUpLevelExponent``, calibrated to the ExtraSensory level at plug-in
    /// (median 35 %, p10 10 %, p90 83 %).
    package var topUpPivotLevel = 35.0
    /// See ``topUpPivotLevel``.
    package var topUpLevelExponent = 1.5
    /// Relative daytime plug-in intensity by local hour 00→23 (NV; shaped
    /// so the ExtraSensory P(plugged) by hour is reproduced).
    package var plugInHourlyShape = [
      0.1, 0.05, 0, 0, 0, 0, 0.1, 0.4, 1.0, 1.2, 1.2, 0.9,
      1.0, 1.1, 1.3, 1.3, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.7, 0.3,
    ]
    /// Median length of a daytime charge, in hours; with
    /// ``daytimeChargeSigma``, calibrated to the ExtraSensory daytime P(plugged)
    /// (.13–.36 between 09:00 and 22:00). The ExtraSensory observed charging-period
    /// median, 0.7 h, is cut by sampling gaps, so it is a lower bound.
    package var daytimeChargeMedianHours = 1.0
    /// Log-scale SD of daytime charge lengths (many short top-ups, a few
    /// long desk charges); see ``daytimeChargeMedianHours``.
    package var daytimeChargeSigma = 1.6
    /// Battery level below which a user starts looking for a charger: a
    /// per-user value, uniform in this range, in percent (NV).
    package var lowBatteryThresholdRange = [10.0, 30.0]
    /// Mean time to plug in once below the threshold, in minutes (NV).
    package var lowBatteryPlugInMinutes = 45.0
    /// Level at which a user always plugs in, in percent (NV).
    package var forcedPlugInLevel = 4.0
    /// Median drain while idle, in % per hour; with the active drain,
    /// calibrated to the ExtraSensory level at plug-in (median 35 %). High for a
    /// current phone: ExtraSensory's phones are from 2015–16.
    package var idleDrainPercentPerHour = 4.0
    /// Median drain while an app is open, in % per hour; see
    /// ``idleDrainPercentPerHour``.
    package var activeDrainPercentPerHour = 30.0
    /// Log-scale SD of a user's drain rates (NV).
    package var drainSigma = 0.3
    /// Median charge rate below 80 %, in % per minute (NV).
    package var chargePercentPerMinute = 1.0
    /// Charge rate above 80 % relative to the rate below (NV).
    package var chargeTaperFactor = 0.4
    /// Battery sampling interval, in seconds.
    package var batterySampleSeconds = 1_800.0

    /// The calibrated defaults (docs/parameters.md).
    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
      case startDate, timeZones, chronotypeSDHours
      case apps, appsPerUserMin, appsPerUserMax, topAppShareMedian
      case topAppShareLogitSD, opensPerDayMedian, opensPerDayUserSigma
      case opensPerDayDaySigma, lightDayProbability, lightDayFactor
      case openHourlyShare, weekendOpensFactor
      case weekendMorningDelayHours, appsPerPickupMean, repickupProbability
      case repickupDelayMedianSeconds, repickupDelaySigma, appRepeatProbability
      case appRepeatMemory
      case appSwitchMedianSeconds, sessionMedianSeconds, sessionSigma
      case sessionUserSigma, sessionMaxSeconds
      case wakesPerHourMedian, wakesPerHourSigma, wakeMinSeconds
      case wakeMaxSeconds
      case updateTopApps, updateHourlyShape
      case wifiFractionMedian, wifiFractionLogitSD, cellularDaySigma
      case commuterShare, workDayProbability, workWifiShare, departHour
      case workdayHours, commuteMedianMinutes, tunnelProbability
      case tunnelMedianMinutes, flightProbabilityPerDay, lteShare, nr5gShare
      case umts3gShare
      case locationWakes, significantChangeMinMinutes
      case significantChangeExtraMinutes, outingMovingMinutes
      case overnightChargeMedian, overnightChargeLogitSD, bedtimeHour
      case bedtimeSDHours, wakeHour, wakeSDHours, weekendWakeDelayHours
      case daytimePlugInsPerDayMedian, daytimePlugInsSigma, topUpPivotLevel
      case topUpLevelExponent
      case plugInHourlyShape
      case daytimeChargeMedianHours, daytimeChargeSigma
      case lowBatteryThresholdRange, lowBatteryPlugInMinutes
      case forcedPlugInLevel, idleDrainPercentPerHour
      case activeDrainPercentPerHour, drainSigma, chargePercentPerMinute
      case chargeTaperFactor, batterySampleSeconds
    }

    /// Decodes any subset of the keys; the others keep their defaults.
    ///
    /// - Throws: ``ParameterError`` for an unknown key; `DecodingError` for
    ///   a value of the wrong type.
    public init(from decoder: any Decoder) throws {
      try SyntheticPopulation.rejectUnknownKeys(
        decoder, CodingKeys.self, context: "parameter")
      let c = try decoder.container(keyedBy: CodingKeys.self)
      self.init()
      func get<T: Decodable>(_ key: CodingKeys, _ v: inout T) throws {
        if let x = try c.decodeIfPresent(T.self, forKey: key) { v = x }
      }
      try get(.startDate, &startDate)
      try get(.timeZones, &timeZones)
      try get(.chronotypeSDHours, &chronotypeSDHours)
      try get(.apps, &apps)
      try get(.appsPerUserMin, &appsPerUserMin)
      try get(.appsPerUserMax, &appsPerUserMax)
      try get(.topAppShareMedian, &topAppShareMedian)
      try get(.topAppShareLogitSD, &topAppShareLogitSD)
      try get(.opensPerDayMedian, &opensPerDayMedian)
      try get(.opensPerDayUserSigma, &opensPerDayUserSigma)
      try get(.opensPerDayDaySigma, &opensPerDayDaySigma)
      try get(.lightDayProbability, &lightDayProbability)
      try get(.lightDayFactor, &lightDayFactor)
      try get(.openHourlyShare, &openHourlyShare)
      try get(.weekendOpensFactor, &weekendOpensFactor)
      try get(.weekendMorningDelayHours, &weekendMorningDelayHours)
      try get(.appsPerPickupMean, &appsPerPickupMean)
      try get(.repickupProbability, &repickupProbability)
      try get(.repickupDelayMedianSeconds, &repickupDelayMedianSeconds)
      try get(.repickupDelaySigma, &repickupDelaySigma)
      try get(.appRepeatProbability, &appRepeatProbability)
      try get(.appRepeatMemory, &appRepeatMemory)
      try get(.appSwitchMedianSeconds, &appSwitchMedianSeconds)
      try get(.sessionMedianSeconds, &sessionMedianSeconds)
      try get(.sessionSigma, &sessionSigma)
      try get(.sessionUserSigma, &sessionUserSigma)
      try get(.sessionMaxSeconds, &sessionMaxSeconds)
      try get(.wakesPerHourMedian, &wakesPerHourMedian)
      try get(.wakesPerHourSigma, &wakesPerHourSigma)
      try get(.wakeMinSeconds, &wakeMinSeconds)
      try get(.wakeMaxSeconds, &wakeMaxSeconds)
      try get(.updateTopApps, &updateTopApps)
      try get(.updateHourlyShape, &updateHourlyShape)
      try get(.wifiFractionMedian, &wifiFractionMedian)
      try get(.wifiFractionLogitSD, &wifiFractionLogitSD)
      try get(.cellularDaySigma, &cellularDaySigma)
      try get(.commuterShare, &commuterShare)
      try get(.workDayProbability, &workDayProbability)
      try get(.workWifiShare, &workWifiShare)
      try get(.departHour, &departHour)
      try get(.workdayHours, &workdayHours)
      try get(.commuteMedianMinutes, &commuteMedianMinutes)
      try get(.tunnelProbability, &tunnelProbability)
      try get(.tunnelMedianMinutes, &tunnelMedianMinutes)
      try get(.flightProbabilityPerDay, &flightProbabilityPerDay)
      try get(.lteShare, &lteShare)
      try get(.nr5gShare, &nr5gShare)
      try get(.umts3gShare, &umts3gShare)
      try get(.locationWakes, &locationWakes)
      try get(.significantChangeMinMinutes, &significantChangeMinMinutes)
      try get(.significantChangeExtraMinutes, &significantChangeExtraMinutes)
      try get(.outingMovingMinutes, &outingMovingMinutes)
      try get(.overnightChargeMedian, &overnightChargeMedian)
      try get(.overnightChargeLogitSD, &overnightChargeLogitSD)
      try get(.bedtimeHour, &bedtimeHour)
      try get(.bedtimeSDHours, &bedtimeSDHours)
      try get(.wakeHour, &wakeHour)
      try get(.wakeSDHours, &wakeSDHours)
      try get(.weekendWakeDelayHours, &weekendWakeDelayHours)
      try get(.daytimePlugInsPerDayMedian, &daytimePlugInsPerDayMedian)
      try get(.daytimePlugInsSigma, &daytimePlugInsSigma)
      try get(.topUpPivotLevel, &topUpPivotLevel)
      try get(.topUpLevelExponent, &topUpLevelExponent)
      try get(.plugInHourlyShape, &plugInHourlyShape)
      try get(.daytimeChargeMedianHours, &daytimeChargeMedianHours)
      try get(.daytimeChargeSigma, &daytimeChargeSigma)
      try get(.lowBatteryThresholdRange, &lowBatteryThresholdRange)
      try get(.lowBatteryPlugInMinutes, &lowBatteryPlugInMinutes)
      try get(.forcedPlugInLevel, &forcedPlugInLevel)
      try get(.idleDrainPercentPerHour, &idleDrainPercentPerHour)
      try get(.activeDrainPercentPerHour, &activeDrainPercentPerHour)
      try get(.drainSigma, &drainSigma)
      try get(.chargePercentPerMinute, &chargePercentPerMinute)
      try get(.chargeTaperFactor, &chargeTaperFactor)
      try get(.batterySampleSeconds, &batterySampleSeconds)
    }
  }
}
