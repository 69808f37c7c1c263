"""Synthetic VitaBench OTA tasks (my own, in VitaBench's format and rubric style) whose gold orders
meet their rubric items, in English and Chinese: a flight, a two-night hotel stay,
attraction tickets for a family, a train back, a pre-existing spare order to cancel.

``ota_items_task(lang)`` is the task; ``OTA_ITEMS[lang]`` its rubric items (each one a typed check
the reader should compile), ``write_tasks`` writes a task file for the loader or the audit."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

UID = "U900001"


def _loc(address: str, lon: float, lat: float) -> dict[str, Any]:
    return {"address": address, "longitude": lon, "latitude": lat}


def _p(pid: str, date: str, price: float, key: str, name: str, quantity: int | None = 20) -> dict[str, Any]:
    row: dict[str, Any] = {"product_id": pid, "price": price, "date": date, key: name}
    if quantity is not None:
        row["quantity"] = quantity
    return row


def _line(pid: str, date: str, price: float, key: str, name: str, quantity: int = 1) -> dict[str, Any]:
    return {"product_id": pid, "price": price, "quantity": quantity, "date": date, key: name}


def _order(oid: str, kind: str, store: str, status: str, lines: list[dict[str, Any]]) -> dict[str, Any]:
    return {"order_id": oid, "order_type": kind, "user_id": UID, "store_id": store,
            "total_price": sum(x["price"] * x["quantity"] for x in lines), "create_time": "2025-04-20 09:00:00",
            "update_time": "2025-04-20 09:00:00", "status": status, "products": lines}


# the words of each world: English, Chinese
_W = {
    "en": dict(home="Room 301, No. 18 Chaoyang Road, Chaoyang District, Beijing", grand="West Lake Grand Hotel",
               inn="Budget Inn Hangzhou East", king="King Room with Breakfast", twin="Twin Room", lake="West Lake",
               lake_desc="Famous lake scenic area", adult="Adult Ticket", child="Child Ticket",
               eco="Economy Class", biz="Business Class", second="Second Class Seat", first="First Class Seat",
               direct="Direct", stop="1 Stop", eastern="China Eastern Airlines", airchina="Air China",
               breakfast="Free breakfast", parking="Free parking", bj="Beijing", hz="Hangzhou",
               bj_airport="Beijing Capital Airport", hz_airport="Hangzhou Xiaoshan Airport",
               hz_station="Hangzhou East Station", bj_station="Beijing South Station",
               hotel_addr="No. 1 Beishan Road, Xihu District, Hangzhou", inn_addr="No. 99 Jianggan Road, Hangzhou",
               lake_addr="Longjing Road, Xihu District, Hangzhou"),
    "zh": dict(home="北京市朝阳区朝阳路18号301室", grand="西湖国宾大酒店", inn="杭州东站经济酒店", king="大床房（含早）",
               twin="双床房", lake="西湖风景区", lake_desc="著名湖泊景区", adult="成人票", child="儿童票", eco="经济舱",
               biz="商务舱", second="二等座", first="一等座", direct="直飞", stop="经停", eastern="东方航空",
               airchina="中国国航", breakfast="含早餐", parking="免费停车", bj="北京", hz="杭州", bj_airport="北京首都机场",
               hz_airport="杭州萧山机场", hz_station="杭州东站", bj_station="北京南站", hotel_addr="杭州市西湖区北山路1号",
               inn_addr="杭州市江干区江干路99号", lake_addr="杭州市西湖区龙井路"),
}

OTA_ITEMS: dict[str, list[str]] = {
    "en": [
        "The flight should be China Eastern Airlines",
        "The flight should be MU5101",
        "Should choose a direct flight",
        "The flight should be economy class",
        "The flight should depart after 08:00 and arrive before 12:00",
        "The flight date should be 2025-05-01",
        "The hotel should be West Lake Grand Hotel",
        "The hotel order's check-in date should be 2025-05-01 and check-out 2025-05-03",
        "The hotel should be four-star or above",
        "The hotel's rating should be 4.5 or above",
        "The hotel should be within 2 km of West Lake",
        "The hotel room should be a king-bed room with breakfast",
        "The hotel price per night should not exceed 800 yuan",
        "The hotel stay should be 2 nights",
        "Should buy 3 adult tickets",
        "The attraction ticket date should be 2025-05-02",
        "The train should be G123",
        "The train ticket should be second-class seat",
        "The train should depart on 2025-05-03",
        "The train should arrive in Beijing before 14:00",
        "The order OTA-EN-OLD should be cancelled",
        "Should query the weather in Hangzhou first",
    ],
    "zh": [
        "航班应为东方航空",
        "航班应为MU5101",
        "应选择直飞航班",
        "应选择经济舱",
        "航班应在08:00之后起飞，12:00之前到达",
        "航班日期应为2025-05-01",
        "酒店应为西湖国宾大酒店",
        "酒店入住日期应为2025-05-01，离店日期为2025-05-03",
        "酒店应为四星级及以上",
        "酒店评分应不低于4.5分",
        "酒店应在西湖风景区2公里范围内",
        "酒店房型应为含早餐的大床房",
        "酒店每晚价格不超过800元",
        "酒店需要入住2晚",
        "需要购买3张成人票",
        "景点门票日期应为2025-05-02",
        "火车应为G123",
        "火车票应为二等座",
        "火车出发日期应为2025-05-03",
        "火车应在14:00前到达北京",
        "订单OTA-ZH-OLD应被取消",
        "需要先查询杭州的天气",
    ],
}


def ota_items_task(lang: str = "en", task_id: str | None = None) -> dict[str, Any]:
    """Fly Beijing -> Hangzhou on 05-01 (MU5101, economy, direct, China Eastern), two nights at the
    five-star West Lake Grand Hotel in a king room with breakfast, three adult West Lake tickets
    on 05-02, the G123 back on 05-03 in second class; cancel the spare order."""
    w = _W[lang]
    tid = task_id or f"OTA-{lang.upper()}"
    old = f"{tid}-OLD"
    gold = [
        _order(f"{tid}N1", "flight", "F1", "paid", [_line("F1E01", "2025-05-01", 700, "seat_type", w["eco"])]),
        _order(f"{tid}N2", "hotel", "H1", "paid", [_line("H1K01", "2025-05-01", 680, "room_type", w["king"]),
                                                    _line("H1K02", "2025-05-02", 720, "room_type", w["king"])]),
        _order(f"{tid}N3", "attraction", "A1", "paid", [_line("A1A02", "2025-05-02", 80, "ticket_type", w["adult"], 3)]),
        _order(f"{tid}N4", "train", "T1", "paid", [_line("T1S03", "2025-05-03", 540, "seat_type", w["second"])]),
        _order(old, "hotel", "H2", "cancelled", [_line("H2K01", "2025-05-01", 300, "room_type", w["king"])]),
    ]
    flight = dict(departure_city=w["bj"], arrival_city=w["hz"],
                  departure_airport_location=_loc(w["bj_airport"], 116.60, 40.08),
                  arrival_airport_location=_loc(w["hz_airport"], 120.43, 30.23))
    train = dict(departure_city=w["hz"], arrival_city=w["bj"], departure_station_location=_loc(w["hz_station"], 120.21, 30.29),
                 arrival_station_location=_loc(w["bj_station"], 116.38, 39.87))
    env = {
        "time": "2025-04-25 10:00:00",
        "user_id": UID,
        "weather": [{"city": w["hz"], "category": "sunny", "datetime": "2025-05-01", "temperature": [18, 26]}],
        "location": [_loc(w["home"], 116.48, 39.92)],
        "user_historical_behaviors": {"user id": UID},
        "orders": {old: _order(old, "hotel", "H2", "paid", [_line("H2K01", "2025-05-01", 300, "room_type", w["king"])])},
        "hotels": {
            "H1": {"hotel_name": w["grand"], "score": 4.7, "star_rating": 5, "tags": [w["breakfast"], w["parking"]],
                   "location": _loc(w["hotel_addr"], 120.150, 30.255),
                   "products": [_p("H1K01", "2025-05-01", 680, "room_type", w["king"]),
                                _p("H1K02", "2025-05-02", 720, "room_type", w["king"]),
                                _p("H1T01", "2025-05-01", 600, "room_type", w["twin"]),
                                _p("H1T02", "2025-05-02", 620, "room_type", w["twin"])]},
            "H2": {"hotel_name": w["inn"], "score": 3.9, "star_rating": 3, "tags": [w["parking"]],
                   "location": _loc(w["inn_addr"], 120.220, 30.300),
                   "products": [_p("H2K01", "2025-05-01", 300, "room_type", w["king"]),
                                _p("H2K02", "2025-05-02", 320, "room_type", w["king"])]},
        },
        "attractions": {
            "A1": {"attraction_name": w["lake"], "score": 4.9, "description": w["lake_desc"], "opening_hours": "00:00-24:00",
                   "ticket_price": 80, "location": _loc(w["lake_addr"], 120.145, 30.245),
                   "products": [_p("A1A02", "2025-05-02", 80, "ticket_type", w["adult"]),
                                _p("A1C02", "2025-05-02", 40, "ticket_type", w["child"]),
                                _p("A1A03", "2025-05-03", 80, "ticket_type", w["adult"])]},
        },
        "flights": {
            "F1": {"flight_number": "MU5101", "departure_time": "09:00", "arrival_time": "11:10",
                   "tags": [w["direct"], w["eastern"]], **flight,
                   "products": [_p("F1E01", "2025-05-01", 700, "seat_type", w["eco"]),
                                _p("F1B01", "2025-05-01", 2100, "seat_type", w["biz"]),
                                _p("F1E02", "2025-05-02", 650, "seat_type", w["eco"])]},
            "F2": {"flight_number": "CA1702", "departure_time": "07:00", "arrival_time": "12:30",
                   "tags": [w["stop"], w["airchina"]], **flight,
                   "products": [_p("F2E01", "2025-05-01", 560, "seat_type", w["eco"])]},
        },
        "trains": {
            "T1": {"train_number": "G123", "departure_time": "08:30", "arrival_time": "13:10", "tags": [], **train,
                   "products": [_p("T1S03", "2025-05-03", 540, "seat_type", w["second"]),
                                _p("T1F03", "2025-05-03", 900, "seat_type", w["first"]),
                                _p("T1S04", "2025-05-04", 540, "seat_type", w["second"])]},
            "T2": {"train_number": "D456", "departure_time": "12:00", "arrival_time": "19:40", "tags": [], **train,
                   "products": [_p("T2S03", "2025-05-03", 400, "seat_type", w["second"])]},
        },
    }
    items = [x.replace("OTA-EN-OLD", old).replace("OTA-ZH-OLD", old) for x in OTA_ITEMS[lang]]
    instructions = ("Book my trip to Hangzhou for May 1-3 with my family: a flight, a hotel, West Lake tickets and "
                    "a train back; cancel my spare hotel booking." if lang == "en" else
                    "帮我安排5月1日到3日的杭州家庭旅行：机票、酒店、西湖门票和返程火车票；取消多余的酒店订单。")
    return {
        "id": tid, "domain": "ota", "instructions": instructions,
        "user_scenario": {"user_profile": {"user id": UID, "home address": w["home"], "personality": "calm"}},
        "environment": env,
        "evaluation_criteria": {
            "expected_states": [{"required_orders": gold, "optional_orders": [], "state_rubrics": ["..."]},
                                {"required_orders": copy.deepcopy(gold), "optional_orders": [], "state_rubrics": ["..."]}],
            "overall_rubrics": items,
        },
    }


def write_tasks(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    return path
