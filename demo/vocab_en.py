"""English vocabulary and sentence templates for the Harbor Gazette demo site.

All names, places and organisations are invented. Templates use ``{slot}``
placeholders that :mod:`demo.text` fills; slots named in ``ARTICLE_SLOTS`` are
drawn once per article so a story keeps talking about the same people.
"""

from __future__ import annotations

FIRST_NAMES = (
    "Maria", "Daniel", "Priya", "Tom", "Grace", "Samuel", "Lena", "Omar", "Hannah",
    "Victor", "Ruth", "Felix", "Nadia", "Owen", "Clara", "Isaac", "Megan", "Jonah",
)
LAST_NAMES = (
    "Alvarez", "Whitfield", "Okafor", "Brennan", "Castillo", "Lindqvist", "Harlow",
    "Nakamura", "Pereira", "Doyle", "Fenwick", "Adeyemi", "Marsh", "Kowalski",
    "Quinlan", "Sato", "Holloway", "Reyes",
)
ROLES = (
    "a city council member", "the deputy mayor", "director of the transit authority",
    "a spokesperson for the Harbor Board", "head of the local business association",
    "the council's finance chair", "a neighborhood organizer",
)
EXPERT_ROLES = (
    "an economist", "a transport researcher", "a professor of urban planning",
    "a senior analyst", "a data scientist",
)
UNIVERSITIES = (
    "Marlow State University", "the Eastbridge Institute of Technology",
    "Kingsferry College", "the Port Marlow Policy Center",
)
DISTRICTS = (
    "Eastbridge", "Saltmere", "Kingsferry", "Northgate", "Wrenham", "Cedar Point",
    "Old Harbor", "Millbrook",
)
STREETS = (
    "Dock Road", "Canal Street", "Beacon Avenue", "Ropewalk Lane", "Mercer Street",
    "Lighthouse Drive", "Tanner Row",
)
ORGS = (
    "the city council", "the Port Marlow Transit Authority", "the Harbor Board",
    "the Department of Parks", "the regional water utility", "the county planning office",
)
PROJECTS = (
    "the Eastbridge flood barrier", "a new protected bike lane network",
    "the Saltmere library extension", "the harborfront promenade",
    "three new night bus routes", "the Kingsferry footbridge",
    "a free school meals program", "affordable housing on Dock Road",
    "the Millbrook community pool",
)
COMPANIES = (
    "Bayline Logistics", "Larchmont Foods", "Northwind Textiles", "Crestview Bank",
    "Halden Shipping", "Greywater Energy", "Tidewell Pharmaceuticals",
)
STARTUPS = (
    "Quillbyte", "Harborlight AI", "Nimbus Grid", "Copperleaf Robotics",
    "Stackwell Labs", "Brightkeel",
)
GADGETS = (
    "a sidewalk delivery robot", "an open data portal for bus arrivals",
    "a battery recycling line", "a chip design center", "a flood warning app",
    "a network of air quality sensors",
)
TEAMS = (
    "the Port Marlow Mariners", "Eastbridge Rovers", "Saltmere Athletic",
    "the Kingsferry Falcons", "Northgate United", "the Wrenham Wolves",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
MONTHS = ("April", "May", "June", "July", "September", "October", "November")
ADJECTIVES = ("encouraged", "cautious", "optimistic", "realistic", "proud", "determined")

ARTICLE_SLOTS = (
    "person", "surname", "role", "district", "street", "org", "project", "company",
    "startup", "gadget", "team", "team2", "expert", "university",
)

HEADLINES: dict[str, tuple[str, ...]] = {
    "city": (
        "Council approves {money} plan for {project}",
        "{District} residents split over {project}",
        "Work on {project} to start in {month}",
        "City delays vote on {project} after late objections",
        "Transit authority unveils changes to {district} bus routes",
        "Survey finds strong support for {project}",
    ),
    "economy": (
        "{Company} to create {n_big} jobs in {district}",
        "{Company} profits rise {pct} percent as demand holds up",
        "Port Marlow unemployment falls to lowest level since {year}",
        "Harbor traffic climbs as {company} adds new routes",
        "Small firms on {street} report a difficult quarter",
    ),
    "tech": (
        "{Startup} raises {money} to expand {gadget}",
        "City tests {gadget} in {district}",
        "{Startup} opens office in {district} with {n_small}0 staff",
        "Students build {gadget} at {university}",
    ),
    "sports": (
        "{Team} edge {team2} {score} in late thriller",
        "{Team} held to {draw} draw by {team2}",
        "Injury blow for {team} ahead of derby",
        "{Team} name new head coach after difficult season",
        "Record crowd watches {team} beat {team2} {score}",
    ),
}

LEADS: dict[str, tuple[str, ...]] = {
    "city": (
        "{Org} on {weekday} approved {money} for {project}, ending "
        "months of debate over how the money should be spent.",
        "Residents of {district} will see work begin on {project} in {month}, {org} confirmed on {weekday}.",
        "Plans for {project} moved a step closer on {weekday} after {org} published a revised timetable.",
    ),
    "economy": (
        "{Company} said on {weekday} that it would invest {money} in {district} over the next three years.",
        "{Company} reported a {pct} percent rise in quarterly "
        "revenue on {weekday}, beating analysts' expectations.",
        "Business owners in {district} say rising costs are squeezing "
        "margins, according to a survey published on {weekday}.",
    ),
    "tech": (
        "{Startup}, a young company based in {district}, announced on "
        "{weekday} that it has raised {money} from local investors.",
        "The city will spend the next six months testing "
        "{gadget} in {district}, officials said on {weekday}.",
    ),
    "sports": (
        "{Team} came from behind to beat {team2} {score} on {weekday} night in front of {n_big} fans.",
        "{Team} and {team2} shared the points after a tense {draw} draw at the Harbor Stadium on {weekday}.",
    ),
}

SENTENCES: dict[str, tuple[str, ...]] = {
    "city": (
        "The plan was backed by {n_small} votes to {n_tiny} after a session that ran late into the evening.",
        "Officials said the work would be carried out in {n_tiny} "
        "phases to limit disruption for local businesses.",
        "\"We have listened to people in {district} and this "
        "is what they asked for,\" said {person}, {role}.",
        "Critics argue that the cost has risen by {pct} percent "
        "since the project was first proposed in {year}.",
        "A public consultation drew more than {n_big} responses, most of them in favor of the proposal.",
        "Traffic on {street} is expected to be diverted for about {n_small} weeks while crews are on site.",
        "{Surname} said the city would publish monthly progress reports on its website.",
        "Some shop owners on {street} remain worried about the impact on trade during construction.",
        "The finance committee will review the budget again in {month}.",
        "Similar schemes in neighboring towns have cut journey "
        "times by up to {pct} percent, according to a recent study.",
        "Older residents have asked for more benches, better lighting and step-free access at every stop.",
        "The council also agreed to set aside {money} for maintenance over the next decade.",
        "Opposition members said the timetable was too optimistic and called for an independent review.",
        "Engineers will carry out ground surveys along {street} before any digging begins.",
        "The mayor's office said the scheme fits the city's plan "
        "to cut car traffic in {district} by {pct} percent.",
        "Parents at two nearby schools have asked for a safe crossing to be built first.",
        "\"Nobody likes roadworks, but the old structure simply cannot carry on as it is,\" {surname} said.",
    ),
    "economy": (
        "Shares in {company} rose {pct_small} percent in early trading after the announcement.",
        "The firm's chief executive, {person}, said demand had held up better than expected.",
        "Port Marlow's unemployment rate stood at {pct_small} "
        "percent last month, the lowest level since {year}.",
        "Economists expect growth in the region to slow slightly in the second half of the year.",
        "The company said most of the new jobs would be in warehousing, engineering and customer service.",
        "Container volumes at the harbor were up {pct} percent compared with the same period last year.",
        "\"We are {adjective} about the year ahead, but energy prices remain a concern,\" {surname} said.",
        "Local suppliers are expected to benefit from contracts worth about {money}.",
        "Rents for commercial space on {street} have climbed steadily since the pandemic.",
        "The results were published after the close of trading on {weekday}.",
        "Analysts at Crestview Bank described the figures as solid rather than spectacular.",
        "The company employs about {n_big} people in the region, most of them at its site on {street}.",
        "Union representatives welcomed the investment but asked for guarantees on wages.",
        "Exports through the harbor have recovered steadily since last spring.",
        "Retail sales in Port Marlow rose {pct_small} percent in the three months to March.",
    ),
    "tech": (
        "{Startup} was founded {n_tiny} years ago by two graduates of {university}.",
        "The pilot will run on {street} and around the {district} ferry terminal.",
        "Privacy campaigners have asked the city to explain how the collected data will be stored.",
        "\"The technology is ready, the question is whether people will "
        "trust it,\" said {expert}, {expert_role} at {university}.",
        "The company plans to double its staff to about {n_small}0 people by the end of next year.",
        "Early tests showed the system was accurate in about {pct_high} percent of cases.",
        "City officials said no personal information would be shared with advertisers.",
        "The money will be used to hire engineers and to open a second workshop in {district}.",
        "Several other coastal cities are watching the trial closely.",
        "Residents who take part in the trial will be asked to fill in a short survey every month.",
        "The software was developed with researchers at {university} over the past {n_tiny} years.",
        "\"We want to show that a city of this size can lead on technology,\" said {person}, {role}.",
        "The first results are expected to be presented to the council in {month}.",
    ),
    "sports": (
        "{Team} dominated possession in the first half but struggled to create clear chances.",
        "The best chance of the night came in the {minute} minute, a low shot that skipped off the post.",
        "\"The boys never stopped running and they deserved that,\" said head coach {person}.",
        "The result lifts {team} to {place_ord} place in the table, {n_tiny} points behind the leaders.",
        "{Team2} had a penalty appeal turned down shortly before half-time.",
        "Attendance at the Harbor Stadium has risen every season since the new stand opened in {year}.",
        "The two sides meet again in the cup quarter-finals in {month}.",
        "Fans braved heavy rain, and many stayed behind after the final whistle to applaud the players.",
        "{Surname} said the squad would have two days off before preparing for the next match.",
        "The club's academy has produced {n_tiny} first-team players in the last three seasons.",
        "The visitors started brightly and forced two early saves from the home goalkeeper.",
        "After the break the home side pressed higher up the pitch and the pressure finally told.",
        "Ticket prices for next season will be frozen, the club confirmed after the match.",
        "The midfielder, who joined from {team2} last summer, was named player of the match.",
        "The club said it would assess two players with minor knocks on {weekday}.",
        "Local bars near the stadium were full long before kick-off.",
        "\"We were not sharp enough in the final third, and that cost us,\" the visiting coach admitted.",
    ),
    "generic": (
        "\"It is too early to say what the long-term effect will "
        "be,\" said {expert}, {expert_role} at {university}.",
        "A full report is expected to be published later this year.",
        "The Harbor Gazette asked {org} for further details but "
        "had not received a reply by the time of publication.",
        "The issue is likely to feature in next year's local election campaign.",
        "Residents can read the documents at the central library or online.",
        "Questions remain about who will pay if costs rise further.",
        "Officials have promised to hold another round of public meetings in {district}.",
        "The figures have not yet been independently verified.",
        "Supporters say the change is long overdue, while opponents want more time to study the details.",
    ),
}

COMMENTS = (
    "Finally some good news for {district}.",
    "Who is actually paying for all of this?",
    "I have lived here for thirty years and I have heard these promises before.",
    "Great reporting, thank you for covering this.",
    "The real problem is parking, and nobody wants to talk about it.",
    "Can someone explain why this took so long?",
    "Happy to see local jobs being created for once.",
    "What a match. Best atmosphere at the stadium in years!",
    "Let's wait and see what happens when the work actually starts.",
)
COMMENTERS = (
    "harborwatcher", "J. Moreno", "dockroad_dave", "Millbrook Mum", "quietreader",
    "P. Lindqvist", "saltmere_sam", "oldharbor1962",
)
CAPTIONS: dict[str, tuple[str, ...]] = {
    "default": (
        "A view across the harbor from {district}.",
        "{Person} speaking to reporters on {weekday}.",
        "Crews at work on {street} earlier this month.",
        "The skyline of {district} at dusk.",
    ),
    "sports": (
        "Supporters outside the Harbor Stadium before kick-off.",
        "The Harbor Stadium floodlights on {weekday} night.",
    ),
}
