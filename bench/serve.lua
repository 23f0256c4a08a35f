-- wrk script of bench/serve.sh: each request translates the next line of
-- $SERVE_SENTENCES (English) into French through LibreTranslate's API.
local lines = {}
for l in io.lines(os.getenv("SERVE_SENTENCES")) do
  lines[#lines + 1] = l
end
local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
end
local bodies = {}
for i, l in ipairs(lines) do
  bodies[i] = '{"q": ' .. quote(l) .. ', "source": "en", "target": "fr"}'
end
local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format("POST", "/translate", {["Content-Type"] = "application/json"}, bodies[i])
end
