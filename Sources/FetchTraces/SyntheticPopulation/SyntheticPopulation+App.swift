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
      App("chat",       weight: 18,  peakHour: 20,   concentration: 0.3, sessionScale: 0.8, updatesPerHour: 3),
      App("messages",   weight: 16,  peakHour: 19,   concentration: 0.3, sessionScale: 0.6, updatesPerHour: 2),
      App("social",     weight: 10,  peakHour: 21,   concentration: 0.6, sessionScale: 1.6, updatesPerHour: 2),
      App("phone",      weight: 9,   peakHour: 17,   concentration: 0.5, sessionScale: 1.8, updatesPerHour: 0),
      App("browser",    weight: 7,   peakHour: 21,   concentration: 0.4, sessionScale: 1.5, updatesPerHour: 0),
      App("mail",       weight: 5,   peakHour: 10,   concentration: 0.8, sessionScale: 1.0, updatesPerHour: 1),
      App("news",       weight: 4,   peakHour: 8,    concentration: 1.0, sessionScale: 1.5, updatesPerHour: 2),
      App("video",      weight: 4,   peakHour: 21,   concentration: 1.2, sessionScale: 4,   updatesPerHour: 0.5),
      App("settings",   weight: 6,   peakHour: 12,   concentration: 0.2, sessionScale: 0.5, updatesPerHour: 0),
      App("music",      weight: 3,   peakHour: 18,   concentration: 0.6, sessionScale: 0.5, updatesPerHour: 0.05),
      App("camera",     weight: 3,   peakHour: 14,   concentration: 0.6, sessionScale: 0.6, updatesPerHour: 0),
      App("photos",     weight: 3,   peakHour: 15,   concentration: 0.5, sessionScale: 0.8, updatesPerHour: 0),
      App("games",      weight: 3,   peakHour: 21,   concentration: 1.0, sessionScale: 3,   updatesPerHour: 0.1),
      App("maps",       weight: 2.5, peakHour: 17,   concentration: 0.8, sessionScale: 1.5, updatesPerHour: 0.05),
      App("weather",    weight: 2.5, peakHour: 7,    concentration: 1.2, sessionScale: 0.4, updatesPerHour: 0.25),
      App("clock",      weight: 2,   peakHour: 7,    concentration: 1.5, sessionScale: 0.3, updatesPerHour: 0),
      App("calendar",   weight: 2,   peakHour: 9,    concentration: 1.0, sessionScale: 0.5, updatesPerHour: 0.2),
      App("contacts",   weight: 3,   peakHour: 14,   concentration: 0.3, sessionScale: 0.6, updatesPerHour: 0),
      App("shopping",   weight: 2,   peakHour: 20,   concentration: 0.8, sessionScale: 2,   updatesPerHour: 0.3),
      App("tv",         weight: 2,   peakHour: 21.5, concentration: 1.5, sessionScale: 5,   updatesPerHour: 0.05),
      App("bank",       weight: 1.5, peakHour: 12,   concentration: 0.6, sessionScale: 0.8, updatesPerHour: 0.05),
      App("podcasts",   weight: 1.5, peakHour: 8,    concentration: 1.0, sessionScale: 1,   updatesPerHour: 0.1),
      App("videocall",  weight: 1.5, peakHour: 19,   concentration: 0.8, sessionScale: 4,   updatesPerHour: 0),
      App("notes",      weight: 1.5, peakHour: 13,   concentration: 0.4, sessionScale: 0.8, updatesPerHour: 0),
      App("store",      weight: 1.5, peakHour: 20,   concentration: 0.5, sessionScale: 1,   updatesPerHour: 0.2),
      App("workchat",   weight: 1.5, peakHour: 11,   concentration: 1.5, sessionScale: 1,   updatesPerHour: 2),
      App("fitness",    weight: 1.2, peakHour: 7,    concentration: 1.0, sessionScale: 1,   updatesPerHour: 0.05),
      App("forum",      weight: 1.2, peakHour: 22,   concentration: 0.8, sessionScale: 2,   updatesPerHour: 1.5),
      App("rideshare",  weight: 1,   peakHour: 18,   concentration: 0.8, sessionScale: 0.8, updatesPerHour: 0),
      App("food",       weight: 1,   peakHour: 19,   concentration: 1.2, sessionScale: 1.5, updatesPerHour: 0.1),
      App("dating",     weight: 1,   peakHour: 22,   concentration: 1.0, sessionScale: 1.5, updatesPerHour: 0.5),
      App("reader",     weight: 1,   peakHour: 22.5, concentration: 1.5, sessionScale: 4,   updatesPerHour: 0),
      App("sports",     weight: 1,   peakHour: 20,   concentration: 0.8, sessionScale: 1.2, updatesPerHour: 1.5),
      App("stocks",     weight: 1,   peakHour: 10,   concentration: 1.0, sessionScale: 0.6, updatesPerHour: 1),
      App("calculator", weight: 1,   peakHour: 14,   concentration: 0.4, sessionScale: 0.3, updatesPerHour: 0),
      App("transit",    weight: 1,   peakHour: 8,    concentration: 1.0, sessionScale: 0.5, updatesPerHour: 0.1),
      App("travel",     weight: 0.8, peakHour: 12,   concentration: 0.5, sessionScale: 1.2, updatesPerHour: 0.1),
      App("files",      weight: 0.8, peakHour: 14,   concentration: 0.3, sessionScale: 0.7, updatesPerHour: 0),
      App("health",     weight: 0.7, peakHour: 22,   concentration: 0.8, sessionScale: 0.5, updatesPerHour: 0),
      App("smarthome",  weight: 0.7, peakHour: 19,   concentration: 0.8, sessionScale: 0.4, updatesPerHour: 0),
      App("translate",  weight: 0.6, peakHour: 14,   concentration: 0.3, sessionScale: 0.5, updatesPerHour: 0),
    ]
  }
}
