"""The project's own travel content: cities with their airports and stations, hotels, room
types, amenities, attractions and ticket types, airlines, trains, events and venues, phrasings.

Written for servicegym (no third-party text); airline names are invented. Prices are in yuan.
"""

from __future__ import annotations

# city -> (longitude, latitude, districts, airport name, railway station name)
CITIES: dict[str, tuple[float, float, tuple[str, ...], str, str]] = {
    "Shanghai": (
        121.4737,
        31.2304,
        ("Xuhui", "Jing'an", "Huangpu", "Pudong"),
        "Shanghai East Airport",
        "Shanghai Hongqiao Station",
    ),
    "Beijing": (
        116.4074,
        39.9042,
        ("Chaoyang", "Haidian", "Dongcheng", "Xicheng"),
        "Beijing Capital Airport",
        "Beijing South Station",
    ),
    "Hangzhou": (
        120.1551,
        30.2741,
        ("Xihu", "Gongshu", "Binjiang", "Shangcheng"),
        "Hangzhou Xiaoshan Airport",
        "Hangzhou East Station",
    ),
    "Chengdu": (
        104.0665,
        30.5728,
        ("Wuhou", "Jinjiang", "Qingyang", "Chenghua"),
        "Chengdu Shuangliu Airport",
        "Chengdu East Station",
    ),
    "Xi'an": (
        108.9398,
        34.3416,
        ("Beilin", "Yanta", "Lianhu", "Xincheng"),
        "Xi'an Xianyang Airport",
        "Xi'an North Station",
    ),
    "Guangzhou": (
        113.2644,
        23.1291,
        ("Tianhe", "Yuexiu", "Haizhu", "Liwan"),
        "Guangzhou Baiyun Airport",
        "Guangzhou South Station",
    ),
    "Nanjing": (
        118.7969,
        32.0603,
        ("Xuanwu", "Qinhuai", "Gulou", "Jianye"),
        "Nanjing Lukou Airport",
        "Nanjing South Station",
    ),
    "Wuhan": (
        114.3054,
        30.5931,
        ("Wuchang", "Jianghan", "Hongshan", "Hanyang"),
        "Wuhan Tianhe Airport",
        "Wuhan Station",
    ),
    "Xiamen": (
        118.0894,
        24.4798,
        ("Siming", "Huli", "Jimei", "Haicang"),
        "Xiamen Gaoqi Airport",
        "Xiamen North Station",
    ),
    "Qingdao": (
        120.3826,
        36.0671,
        ("Shinan", "Shibei", "Laoshan", "Licang"),
        "Qingdao Jiaodong Airport",
        "Qingdao North Station",
    ),
}
STREETS = (
    "Maple",
    "Lotus",
    "Riverside",
    "Harbor",
    "Garden",
    "Spring",
    "Pine",
    "Willow",
    "Orchard",
    "Bamboo",
    "Lantern",
    "Silk",
    "Cedar",
    "Peony",
    "Jade",
    "Osprey",
)
BUILDINGS = ("Tower A", "Building 3", "Unit 12", "Block 7", "Sunrise Residence", "Courtyard 5")

# modes: seat classes cheapest first, with price multipliers; speed (km/h) and fixed overhead (min)
FLIGHT_CLASSES = (("Economy", 1.0), ("Premium Economy", 1.6), ("Business", 2.8))
TRAIN_CLASSES = (("Second Class", 1.0), ("First Class", 1.6), ("Business Class", 3.1))
MODE_SPEED = {"flight": (720.0, 45), "train": (260.0, 20)}
# yuan per km of straight-line distance for the cheapest class, and the floor
MODE_FARE = {"flight": (0.55, 380.0), "train": (0.42, 120.0)}
AIRLINES = (
    ("Cloudway Air", "CW"),
    ("Jade Wing Airlines", "JW"),
    ("Silver Kite Airways", "SK"),
    ("Red Crown Air", "RC"),
    ("East Lotus Airlines", "EL"),
)
FLIGHT_TAGS = ("Direct", "Meal included", "Free checked bag", "On-time champion", "Wide-body aircraft")
TRAIN_TAGS = ("High-speed", "Quiet carriage", "Dining car", "Wi-Fi", "Power sockets")
TRAIN_PREFIXES = ("G", "D")

# hotels: name stems, amenities (the user's requirement and why), room types (multiplier)
HOTEL_STEMS = (
    "Riverside Grand Hotel",
    "Lotus Garden Hotel",
    "Skyline Business Hotel",
    "Orchid Suites",
    "Harbor View Inn",
    "Bamboo Court Hotel",
    "Silk Road Hotel",
    "Maple Leaf Hotel",
    "Jade Tower Hotel",
    "Sunrise Boutique Hotel",
    "Cloud Terrace Hotel",
    "Pearl Bay Hotel",
    "Crane Pavilion Hotel",
    "Golden Willow Inn",
)
HOTEL_TAGS = {
    "Free breakfast": "Breakfast has to be included, I won't have time to look for food in the morning.",
    "Swimming pool": "The hotel must have a swimming pool, I swim every morning.",
    "Gym": "I need a hotel with a gym.",
    "Free parking": "I'll rent a car there, so the hotel needs free parking.",
    "Pet-friendly": "My dog comes with me, so the hotel must be pet-friendly.",
    "Laundry service": "I need a hotel with a laundry service.",
}
ROOM_TYPES = (
    ("Standard Queen Room", 1.0),
    ("Twin Room", 1.12),
    ("Deluxe King Room", 1.35),
    ("Family Suite", 1.9),
    ("Executive Room", 1.6),
)
ROOM_REASONS = {
    "Twin Room": "We'd like a twin room, two separate beds.",
    "Deluxe King Room": "Please book a deluxe king room.",
    "Family Suite": "It has to be a family suite.",
    "Executive Room": "I'd like an executive room, I'll be working from the room.",
}
NIGHTLY_BASE = {3: (260, 360), 4: (420, 580), 5: (700, 980)}

# attractions: kind -> (search keyword, [(name stem, description)])
ATTRACTIONS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "museum": (
        "museum",
        (
            ("City History Museum", "A museum of the city's history, from bronze ware to old street photographs."),
            ("Museum of Folk Art", "A museum of embroidery, paper cutting and woodblock prints."),
            ("Provincial Museum", "A large museum of archaeology and calligraphy."),
        ),
    ),
    "aquarium": (
        "aquarium",
        (
            ("Ocean World Aquarium", "An aquarium with a shark tunnel and a jellyfish hall."),
            ("Blue Reef Aquarium", "An aquarium of coral reefs, penguins and sea turtles."),
        ),
    ),
    "botanical garden": (
        "botanical garden",
        (
            ("Botanical Garden", "A botanical garden with greenhouses and a bamboo valley."),
            ("Orchid Valley Botanical Garden", "A botanical garden famous for orchids and lotus ponds."),
        ),
    ),
    "ancient town": (
        "ancient town",
        (
            ("Old Canal Ancient Town", "An ancient town of canals, stone bridges and tea houses."),
            ("Misty Water Ancient Town", "An ancient water town with boat rides and old residences."),
        ),
    ),
    "observation tower": (
        "tower",
        (
            ("Sky Needle Observation Tower", "An observation tower with a glass floor and city views."),
            ("Riverside TV Tower", "A TV tower with a revolving observation deck."),
        ),
    ),
    "zoo": (
        "zoo",
        (
            ("Wildlife Zoo", "A zoo with giant pandas, red pandas and a safari ride."),
            ("Forest Park Zoo", "A zoo in a forest park, with a petting farm."),
        ),
    ),
    "art gallery": (
        "art gallery",
        (
            ("Modern Art Gallery", "An art gallery of contemporary painting and installations."),
            ("Ink and Brush Art Gallery", "An art gallery of ink painting and calligraphy."),
        ),
    ),
}
TICKET_TYPES = (
    ("Standard Admission", 1.0),
    ("Admission with Audio Guide", 1.25),
    ("Admission with Guided Tour", 1.6),
    ("Fast-Track Admission", 1.45),
)
TICKET_REASONS = {
    "Admission with Audio Guide": "We'd like tickets with the audio guide.",
    "Admission with Guided Tour": "We want the tickets that include the guided tour.",
    "Fast-Track Admission": "Get the fast-track tickets, I hate queues.",
}
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# trip purposes: (what the user goes to, what it is called after, the venue's name stem)
EVENTS = (
    ("an industry conference", "conference", "International Convention Center"),
    ("a trade fair", "fair", "Expo Hall"),
    ("a concert", "concert", "Olympic Sports Center Arena"),
    ("a friend's wedding", "wedding", "Garden Banquet Hall"),
    ("a job interview", "interview", "Science Park Tower"),
    ("a training course", "course", "University Conference Hall"),
    ("a client meeting", "meeting", "Financial Center Tower"),
)

# holidays the generator may name (English names as the holidays package gives them)
HOLIDAYS = (
    "New Year's Day",
    "Tomb-Sweeping Day",
    "Labor Day",
    "Dragon Boat Festival",
    "Mid-Autumn Festival",
    "National Day",
)

# the user's personalities are content_delivery.PERSONALITIES, shared by every domain
OPENINGS = {
    "polite": (
        "Hello, I need to go to {city} for {event}. Could you help me arrange the trip?",
        "Hi, could you help me plan a trip to {city}? I'm going for {event}.",
    ),
    "terse": ("Trip to {city}, for {event}. Book it.", "Need to get to {city} for {event}."),
    "impatient": (
        "I have to be in {city} for {event}, please sort out the trip quickly.",
        "Quick, I need a trip to {city} for {event}.",
    ),
    "chatty": (
        "Hi there! Guess what, I'm off to {city} for {event}! Can you help me put the trip together?",
        "Hello! I'm heading to {city} for {event} and I'd love your help with the bookings.",
    ),
}
MODE_WISH = {"flight": "I'd like to fly.", "train": "I'd rather take the train."}
