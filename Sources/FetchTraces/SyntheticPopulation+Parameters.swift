extension SyntheticPopulation {
  /// One app of the pool users draw their apps from.
  ///
  /// The time-of-day preference is a von Mises bump in local time: when a
  /// user picks which app to open at local hour x, the app's popularity is
  /// multiplied by `exp(concentration · cos(2π (x − peakHour) / 24))`.
  /// It shifts which apps are opened when, not how many opens there are.
  package struct App: Sendable, Codable, Equatable {
    /// Generic app id written in the trace (`news`, `mail`, ...).
    package var name: String
    /// Relative chance of being among a user's apps and of ranking high in
    /// that user's popularity order (NV; shaped after the UbiqLog top-10 list,
    /// where messaging dominates, toward its pooled top-10 share of 57 %).
    package var weight: Double
    /// Local hour of peak preference, 0..<24 (NV; e.g. news in the morning,
    /// Böhmer et al., MobileHCI 2011).
    package var peakHour: Double
    /// Strength of the preference; 0 = none (NV).
    package var concentration: Double
    /// Multiplier of the user's session length for this app (NV).
    package var sessionScale: Double
    /// Server-side content changes per hour, daily average (NV; the brief's
    /// placeholders: news 2, mail 1, chat 3, weather 0.25).
    package var updatesPerHour: Double
    /// Large content (podcast episodes, video, offline maps): median size
    /// of the item each update publishes, bytes, written as the `update`
    /// row's value; 0 (the default, every app of ``defaultPool``) writes no
    /// size and the world draws the response size as before. Sizes per app
    /// are documented with their sources in docs/background-transfers.md.
    package var contentMedianBytes: Double
    /// Log-sd of the item size (lognormal around ``contentMedianBytes``).
    package var contentSigma: Double

    package init(
      _ name: String, weight: Double, peakHour: Double, concentration: Double,
      sessionScale: Double = 1, updatesPerHour: Double = 0, contentMedianBytes: Double = 0, contentSigma: Double = 0
    ) {
      self.name = name
      self.weight = weight
      self.peakHour = peakHour
      self.concentration = concentration
      self.sessionScale = sessionScale
      self.updatesPerHour = updatesPerHour
      self.contentMedianBytes = contentMedianBytes
      self.contentSigma = contentSigma
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
      case name, weight, peakHour, concentration, sessionScale, updatesPerHour
      case contentMedianBytes, contentSigma
    }

    /// Writes every key but the content sizes, which only when set (so the
    /// parameters of populations without large content print as before).
    package func encode(to encoder: any Encoder) throws {
      var c = encoder.container(keyedBy: CodingKeys.self)
      try c.encode(name, forKey: .name)
      try c.encode(weight, forKey: .weight)
      try c.encode(peakHour, forKey: .peakHour)
      try c.encode(concentration, forKey: .concentration)
      try c.encode(sessionScale, forKey: .sessionScale)
      try c.encode(updatesPerHour, forKey: .updatesPerHour)
      if contentMedianBytes != 0 { try c.encode(contentMedianBytes, forKey: .contentMedianBytes) }
      if contentSigma != 0 { try c.encode(contentSigma, forKey: .contentSigma) }
    }

    package init(from decoder: any Decoder) throws {
      try SyntheticPopulation.rejectUnknownKeys(
        decoder, CodingKeys.self, context: "app")
      let c = try decoder.container(keyedBy: CodingKeys.self)
      name = try c.decode(String.self, forKey: .name)
      weight = try c.decodeIfPresent(Double.self, forKey: .weight) ?? 1
      peakHour = try c.decodeIfPresent(Double.self, forKey: .peakHour) ?? 12
      concentration =
        try c.decodeIfPresent(Double.self, forKey: .concentration) ?? 0
      sessionScale =
        try c.decodeIfPresent(Double.self, forKey: .sessionScale) ?? 1
      updatesPerHour =
        try c.decodeIfPresent(Double.self, forKey: .updatesPerHour) ?? 0
      contentMedianBytes = try c.decodeIfPresent(Double.self, forKey: .contentMedianBytes) ?? 0
      contentSigma = try c.decodeIfPresent(Double.self, forKey: .contentSigma) ?? 0
    }

    /// The default pool: 41 generic apps.
    package static let defaultPool: [App] = [
      App(
        "chat", weight: 18, peakHour: 20, concentration: 0.3,
        sessionScale: 0.8, updatesPerHour: 3),
      App(
        "messages", weight: 16, peakHour: 19, concentration: 0.3,
        sessionScale: 0.6, updatesPerHour: 2),
      App(
        "social", weight: 10, peakHour: 21, concentration: 0.6,
        sessionScale: 1.6, updatesPerHour: 2),
      App(
        "phone", weight: 9, peakHour: 17, concentration: 0.5,
        sessionScale: 1.8),
      App(
        "browser", weight: 7, peakHour: 21, concentration: 0.4,
        sessionScale: 1.5),
      App(
        "mail", weight: 5, peakHour: 10, concentration: 0.8,
        sessionScale: 1.0, updatesPerHour: 1),
      App(
        "news", weight: 4, peakHour: 8, concentration: 1.0,
        sessionScale: 1.5, updatesPerHour: 2),
      App(
        "video", weight: 4, peakHour: 21, concentration: 1.2,
        sessionScale: 4, updatesPerHour: 0.5),
      App(
        "settings", weight: 6, peakHour: 12, concentration: 0.2,
        sessionScale: 0.5),
      App(
        "music", weight: 3, peakHour: 18, concentration: 0.6,
        sessionScale: 0.5, updatesPerHour: 0.05),
      App(
        "camera", weight: 3, peakHour: 14, concentration: 0.6,
        sessionScale: 0.6),
      App(
        "photos", weight: 3, peakHour: 15, concentration: 0.5,
        sessionScale: 0.8),
      App(
        "games", weight: 3, peakHour: 21, concentration: 1.0,
        sessionScale: 3, updatesPerHour: 0.1),
      App(
        "maps", weight: 2.5, peakHour: 17, concentration: 0.8,
        sessionScale: 1.5, updatesPerHour: 0.05),
      App(
        "weather", weight: 2.5, peakHour: 7, concentration: 1.2,
        sessionScale: 0.4, updatesPerHour: 0.25),
      App(
        "clock", weight: 2, peakHour: 7, concentration: 1.5,
        sessionScale: 0.3),
      App(
        "calendar", weight: 2, peakHour: 9, concentration: 1.0,
        sessionScale: 0.5, updatesPerHour: 0.2),
      App(
        "contacts", weight: 3, peakHour: 14, concentration: 0.3,
        sessionScale: 0.6),
      App(
        "shopping", weight: 2, peakHour: 20, concentration: 0.8,
        sessionScale: 2, updatesPerHour: 0.3),
      App(
        "tv", weight: 2, peakHour: 21.5, concentration: 1.5,
        sessionScale: 5, updatesPerHour: 0.05),
      App(
        "bank", weight: 1.5, peakHour: 12, concentration: 0.6,
        sessionScale: 0.8, updatesPerHour: 0.05),
      App(
        "podcasts", weight: 1.5, peakHour: 8, concentration: 1.0,
        sessionScale: 1, updatesPerHour: 0.1),
      App(
        "videocall", weight: 1.5, peakHour: 19, concentration: 0.8,
        sessionScale: 4),
      App(
        "notes", weight: 1.5, peakHour: 13, concentration: 0.4,
        sessionScale: 0.8),
      App(
        "store", weight: 1.5, peakHour: 20, concentration: 0.5,
        sessionScale: 1, updatesPerHour: 0.2),
      App(
        "workchat", weight: 1.5, peakHour: 11, concentration: 1.5,
        sessionScale: 1, updatesPerHour: 2),
      App(
        "fitness", weight: 1.2, peakHour: 7, concentration: 1.0,
        sessionScale: 1, updatesPerHour: 0.05),
      App(
        "forum", weight: 1.2, peakHour: 22, concentration: 0.8,
        sessionScale: 2, updatesPerHour: 1.5),
      App(
        "rideshare", weight: 1, peakHour: 18, concentration: 0.8,
        sessionScale: 0.8),
      App(
        "food", weight: 1, peakHour: 19, concentration: 1.2,
        sessionScale: 1.5, updatesPerHour: 0.1),
      App(
        "dating", weight: 1, peakHour: 22, concentration: 1.0,
        sessionScale: 1.5, updatesPerHour: 0.5),
      App(
        "reader", weight: 1, peakHour: 22.5, concentration: 1.5,
        sessionScale: 4),
      App(
        "sports", weight: 1, peakHour: 20, concentration: 0.8,
        sessionScale: 1.2, updatesPerHour: 1.5),
      App(
        "stocks", weight: 1, peakHour: 10, concentration: 1.0,
        sessionScale: 0.6, updatesPerHour: 1),
      App(
        "calculator", weight: 1, peakHour: 14, concentration: 0.4,
        sessionScale: 0.3),
      App(
        "transit", weight: 1, peakHour: 8, concentration: 1.0,
        sessionScale: 0.5, updatesPerHour: 0.1),
      App(
        "travel", weight: 0.8, peakHour: 12, concentration: 0.5,
        sessionScale: 1.2, updatesPerHour: 0.1),
      App(
        "files", weight: 0.8, peakHour: 14, concentration: 0.3,
        sessionScale: 0.7),
      App(
        "health", weight: 0.7, peakHour: 22, concentration: 0.8,
        sessionScale: 0.5),
      App(
        "smarthome", weight: 0.7, peakHour: 19, concentration: 0.8,
        sessionScale: 0.4),
      App(
        "translate", weight: 0.6, peakHour: 14, concentration: 0.3,
        sessionScale: 0.5),
    ]
  }

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

    /// Checks ranges and lengths; throws a ``ParameterError`` naming the
    /// first bad parameter.
    public func validate() throws {
      func check(_ ok: Bool, _ key: CodingKeys, _ why: String) throws {
        if !ok { throw ParameterError(.invalid(key.rawValue, why)) }
      }
      func finite(_ xs: Double...) -> Bool { xs.allSatisfy(\.isFinite) }
      func prob(_ x: Double) -> Bool { x >= 0 && x <= 1 }
      func curve(_ c: [Double]) -> Bool {
        c.count == 24 && c.allSatisfy { $0.isFinite && $0 >= 0 }
          && c.reduce(0, +) > 0
      }
      try check(
        SyntheticPopulation.civilDay(startDate) != nil, .startDate,
        "expected YYYY-MM-DD")
      try check(!timeZones.isEmpty, .timeZones, "needs at least one zone")
      for z in timeZones {
        guard case .fixed = TraceTimeZone(parsing: z) else {
          throw ParameterError(
            .invalid("timeZones", "'\(z)' is not a fixed offset +HH:MM"))
        }
      }
      try check(
        finite(chronotypeSDHours) && chronotypeSDHours >= 0
          && chronotypeSDHours <= 4, .chronotypeSDHours, "must be in 0...4")
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
      try check(
        finite(topAppShareLogitSD) && topAppShareLogitSD >= 0,
        .topAppShareLogitSD, "must be ≥ 0")
      try check(
        finite(opensPerDayMedian) && opensPerDayMedian >= 0
          && opensPerDayMedian <= 5_000, .opensPerDayMedian,
        "must be in 0...5000")
      try check(
        finite(opensPerDayUserSigma) && opensPerDayUserSigma >= 0
          && opensPerDayUserSigma <= 3, .opensPerDayUserSigma,
        "must be in 0...3")
      try check(
        finite(opensPerDayDaySigma) && opensPerDayDaySigma >= 0
          && opensPerDayDaySigma <= 3, .opensPerDayDaySigma,
        "must be in 0...3")
      try check(
        prob(lightDayProbability) && lightDayProbability < 1,
        .lightDayProbability, "must be in 0..<1")
      try check(
        finite(lightDayFactor) && lightDayFactor > 0 && lightDayFactor <= 1,
        .lightDayFactor, "must be in (0, 1]")
      try check(
        curve(openHourlyShare), .openHourlyShare,
        "needs 24 non-negative values with a positive sum")
      try check(
        finite(weekendOpensFactor) && weekendOpensFactor >= 0,
        .weekendOpensFactor, "must be ≥ 0")
      try check(
        finite(weekendMorningDelayHours) && abs(weekendMorningDelayHours) <= 6,
        .weekendMorningDelayHours, "must be in -6...6")
      try check(
        finite(appsPerPickupMean) && appsPerPickupMean >= 1
          && appsPerPickupMean <= 50, .appsPerPickupMean, "must be in 1...50")
      try check(
        prob(repickupProbability) && repickupProbability <= 0.95,
        .repickupProbability, "must be in 0...0.95")
      try check(
        finite(repickupDelayMedianSeconds) && repickupDelayMedianSeconds > 0,
        .repickupDelayMedianSeconds, "must be > 0")
      try check(
        finite(repickupDelaySigma) && repickupDelaySigma >= 0,
        .repickupDelaySigma, "must be ≥ 0")
      try check(
        prob(appRepeatProbability), .appRepeatProbability, "must be in 0...1")
      try check(
        appRepeatMemory >= 1 && appRepeatMemory <= 100, .appRepeatMemory,
        "must be in 1...100")
      try check(
        finite(appSwitchMedianSeconds) && appSwitchMedianSeconds > 0,
        .appSwitchMedianSeconds, "must be > 0")
      try check(
        finite(sessionMedianSeconds) && sessionMedianSeconds > 0,
        .sessionMedianSeconds, "must be > 0")
      try check(
        finite(sessionSigma) && sessionSigma >= 0, .sessionSigma,
        "must be ≥ 0")
      try check(
        finite(sessionUserSigma) && sessionUserSigma >= 0, .sessionUserSigma,
        "must be ≥ 0")
      try check(
        finite(sessionMaxSeconds) && sessionMaxSeconds >= 1
          && sessionMaxSeconds <= 86_400, .sessionMaxSeconds,
        "must be in 1...86400")
      try check(
        finite(wakesPerHourMedian) && wakesPerHourMedian >= 0
          && wakesPerHourMedian <= 600, .wakesPerHourMedian,
        "must be in 0...600")
      try check(
        finite(wakesPerHourSigma) && wakesPerHourSigma >= 0,
        .wakesPerHourSigma, "must be ≥ 0")
      try check(
        finite(wakeMinSeconds) && wakeMinSeconds >= 0, .wakeMinSeconds,
        "must be ≥ 0")
      try check(
        finite(wakeMaxSeconds) && wakeMaxSeconds >= wakeMinSeconds
          && wakeMaxSeconds <= 86_400, .wakeMaxSeconds,
        "must be in wakeMinSeconds...86400")
      try check(updateTopApps >= 0, .updateTopApps, "must be ≥ 0")
      try check(
        curve(updateHourlyShape), .updateHourlyShape,
        "needs 24 non-negative values with a positive sum")
      try check(
        wifiFractionMedian > 0 && wifiFractionMedian < 1, .wifiFractionMedian,
        "must be in (0, 1)")
      try check(
        finite(wifiFractionLogitSD) && wifiFractionLogitSD >= 0,
        .wifiFractionLogitSD, "must be ≥ 0")
      try check(
        finite(cellularDaySigma) && cellularDaySigma >= 0, .cellularDaySigma,
        "must be ≥ 0")
      try check(prob(commuterShare), .commuterShare, "must be in 0...1")
      try check(
        prob(workDayProbability), .workDayProbability, "must be in 0...1")
      try check(prob(workWifiShare), .workWifiShare, "must be in 0...1")
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
      try check(
        prob(tunnelProbability), .tunnelProbability, "must be in 0...1")
      try check(
        finite(tunnelMedianMinutes) && tunnelMedianMinutes > 0,
        .tunnelMedianMinutes, "must be > 0")
      try check(
        prob(flightProbabilityPerDay), .flightProbabilityPerDay,
        "must be in 0...1")
      try check(
        finite(significantChangeMinMinutes) && significantChangeMinMinutes >= 1
          && significantChangeMinMinutes <= 1440, .significantChangeMinMinutes,
        "must be in 1...1440")
      try check(
        finite(significantChangeExtraMinutes) && significantChangeExtraMinutes >= 0
          && significantChangeExtraMinutes <= 1440, .significantChangeExtraMinutes,
        "must be in 0...1440")
      try check(
        finite(outingMovingMinutes) && outingMovingMinutes >= 0
          && outingMovingMinutes <= 1440, .outingMovingMinutes,
        "must be in 0...1440")
      let shares = [lteShare, nr5gShare, umts3gShare]
      try check(
        shares.allSatisfy { $0.isFinite && $0 >= 0 }
          && shares.reduce(0, +) > 0, .lteShare,
        "lteShare, nr5gShare and umts3gShare must be ≥ 0 with a positive sum")
      try check(
        overnightChargeMedian > 0 && overnightChargeMedian < 1,
        .overnightChargeMedian, "must be in (0, 1)")
      try check(
        finite(overnightChargeLogitSD) && overnightChargeLogitSD >= 0,
        .overnightChargeLogitSD, "must be ≥ 0")
      try check(
        finite(bedtimeHour) && bedtimeHour >= 12 && bedtimeHour <= 30,
        .bedtimeHour, "must be in 12...30 (hours after the day's midnight)")
      try check(
        finite(bedtimeSDHours) && bedtimeSDHours >= 0 && bedtimeSDHours <= 4,
        .bedtimeSDHours, "must be in 0...4")
      try check(
        finite(wakeHour) && wakeHour >= 0 && wakeHour <= 14, .wakeHour,
        "must be in 0...14")
      try check(
        finite(wakeSDHours) && wakeSDHours >= 0 && wakeSDHours <= 4,
        .wakeSDHours, "must be in 0...4")
      try check(
        finite(weekendWakeDelayHours) && abs(weekendWakeDelayHours) <= 6,
        .weekendWakeDelayHours, "must be in -6...6")
      try check(
        finite(daytimePlugInsPerDayMedian) && daytimePlugInsPerDayMedian >= 0
          && daytimePlugInsPerDayMedian <= 100, .daytimePlugInsPerDayMedian,
        "must be in 0...100")
      try check(
        finite(daytimePlugInsSigma) && daytimePlugInsSigma >= 0,
        .daytimePlugInsSigma, "must be ≥ 0")
      try check(
        finite(topUpPivotLevel) && topUpPivotLevel >= 0
          && topUpPivotLevel < 100, .topUpPivotLevel, "must be in 0..<100")
      try check(
        finite(topUpLevelExponent) && topUpLevelExponent >= 0
          && topUpLevelExponent <= 20, .topUpLevelExponent,
        "must be in 0...20")
      try check(
        curve(plugInHourlyShape), .plugInHourlyShape,
        "needs 24 non-negative values with a positive sum")
      try check(
        finite(daytimeChargeMedianHours) && daytimeChargeMedianHours > 0,
        .daytimeChargeMedianHours, "must be > 0")
      try check(
        finite(daytimeChargeSigma) && daytimeChargeSigma >= 0,
        .daytimeChargeSigma, "must be ≥ 0")
      let r = lowBatteryThresholdRange
      try check(
        r.count == 2 && finite(r[0], r[1]) && r[0] >= 0 && r[0] <= r[1]
          && r[1] <= 100, .lowBatteryThresholdRange,
        "needs [low, high] with 0 ≤ low ≤ high ≤ 100")
      try check(
        finite(lowBatteryPlugInMinutes) && lowBatteryPlugInMinutes > 0,
        .lowBatteryPlugInMinutes, "must be > 0")
      try check(
        finite(forcedPlugInLevel) && forcedPlugInLevel >= 0
          && forcedPlugInLevel < 100, .forcedPlugInLevel, "must be in 0..<100")
      try check(
        finite(idleDrainPercentPerHour) && idleDrainPercentPerHour >= 0,
        .idleDrainPercentPerHour, "must be ≥ 0")
      try check(
        finite(activeDrainPercentPerHour) && activeDrainPercentPerHour >= 0,
        .activeDrainPercentPerHour, "must be ≥ 0")
      try check(
        finite(drainSigma) && drainSigma >= 0, .drainSigma, "must be ≥ 0")
      try check(
        finite(chargePercentPerMinute) && chargePercentPerMinute > 0,
        .chargePercentPerMinute, "must be > 0")
      try check(
        finite(chargeTaperFactor) && chargeTaperFactor > 0
          && chargeTaperFactor <= 1, .chargeTaperFactor, "must be in (0, 1]")
      try check(
        finite(batterySampleSeconds) && batterySampleSeconds >= 60,
        .batterySampleSeconds, "must be ≥ 60")
    }
  }

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
