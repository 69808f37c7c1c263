"""The project's own cross-scenario content: how a traveller asks for the evening out and the
late-night delivery around a trip, notes for a delivery to a hotel, and the openings.

Written for servicegym (no third-party text). Cities, hotels, transport, shop categories,
packages, cuisines and dishes come from the single-domain content modules (``content_travel``,
``content_instore``, ``content_delivery``); only what a trip spanning the three domains adds is
here.
"""

from __future__ import annotations

# in-store categories that suit an evening after a journey -> (how the user asks for the visit,
# what the place is called); "{item}" is the package the user names (the first field of a
# content_instore product type)
EVENING_VISITS: dict[str, tuple[str, str]] = {
    "hot pot": ("{item} dinner at a hot pot restaurant", "restaurant"),
    "Cantonese restaurant": ("{item} at a Cantonese restaurant", "restaurant"),
    "Japanese restaurant": ("{item} at a Japanese restaurant", "restaurant"),
    "karaoke": ("{item} at a karaoke bar", "karaoke bar"),
    "spa": ("{item} at a spa", "spa"),
    "yoga studio": ("{item} at a yoga studio", "studio"),
}
# package phrases that name another time of day, so never asked for in the evening
DAYTIME_WORDS = ("brunch", "afternoon")

# supper cuisines from content_delivery, and how the user names the delivery
SUPPER_CUISINES = ("noodles", "dumplings", "porridge", "drinks", "burgers", "rice bowls")
DELIVERY_WISH = "And once I've checked in, I'd like some {dish} delivered to the hotel that night."

# delivery notes that matter at a hotel: the key -> (how the user asks, the note, words the note must contain)
HOTEL_NOTES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "front desk": (
        "Please add a note that the rider should leave it at the front desk.",
        "Please leave it at the front desk",
        ("front desk",),
    ),
    "call on arrival": (
        "Please note that the rider should call me when they reach the hotel.",
        "Please call me when you reach the hotel",
        ("call",),
    ),
    "lobby": (
        "Please add a note that I'll come down to the lobby to collect it.",
        "I will come down to the lobby to collect it",
        ("lobby",),
    ),
}

# where the traveller lands, by mode (for the transfer margin)
HUB_NOUN = {"flight": "airport", "train": "station"}

OPENINGS: dict[str, tuple[str, ...]] = {
    "polite": (
        "Hello, I'm travelling to {city} for {event} and would like help with the whole trip.",
        "Hi, could you help me organise a trip to {city}? I'm going for {event}.",
    ),
    "terse": ("Trip to {city}, for {event}. Organise it.", "Need to get to {city} for {event}."),
    "impatient": (
        "I have to be in {city} for {event}, please sort everything out quickly.",
        "Quick, I need a trip to {city} for {event}, and a few things around it.",
    ),
    "chatty": (
        "Hi there! I'm off to {city} for {event} and I want the whole trip to go smoothly. Can you help?",
        "Hello! I'm heading to {city} for {event}, and I could use your help with everything around it.",
    ),
}

# what the wrongly booked hotel in the cancellation is said to be for
WRONG_WEEK = "I also booked a hotel in {city} for the wrong week by mistake, please cancel it, but keep my {mode} home."
