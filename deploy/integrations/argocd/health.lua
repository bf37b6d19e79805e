-- Argo CD health for liveproof.dev/Verification: Healthy only once the change is proven live
-- (Ready=True), Degraded on a final failure (Stalled=True), Progressing otherwise — including
-- a Verification no controller has judged yet, or judged for an older generation of its spec.
-- The message is the deciding condition's.
local hs = {}
local function condition(kind)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == kind then
      return c
    end
  end
  return nil
end
local function said(c, default)
  if c ~= nil and c.message ~= nil and c.message ~= "" then
    return c.message
  end
  if c ~= nil and c.reason ~= nil and c.reason ~= "" then
    return c.reason
  end
  return default
end
local generation = obj.metadata.generation
local observed = nil
if obj.status ~= nil then
  observed = obj.status.observedGeneration
end
if observed == nil or (generation ~= nil and observed ~= generation) then
  hs.status = "Progressing"
  hs.message = "not judged yet: waiting for liveproof controller to verify this generation"
  return hs
end
local stalled = condition("Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = said(stalled, "the change cannot go live")
  return hs
end
local ready = condition("Ready")
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = said(ready, "live")
  return hs
end
hs.status = "Progressing"
hs.message = said(ready, "waiting for the proof")
return hs
