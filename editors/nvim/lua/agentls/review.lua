-- A waiting proposal drawn in its file's own buffer and decided hunk by hunk (see
-- editors/nvim/README.md, "Reviewing a proposal").
--
-- The permission-request's `edit` has one TextEdit per hunk, each replacing whole lines of the
-- text the proposal was made from (docs/protocol.md, agent/approve). Each hunk's removed lines
-- are highlighted (DiffDelete) and its added lines shown below them as virtual lines (DiffAdd),
-- with a label at the end of its first line. Buffer-local keys move between hunks and keep or
-- drop the one under the cursor; once every hunk is decided, agent/approve goes with exactly the
-- kept TextEdits as `edit` (all kept: a plain "once"; none: "reject").

local M = {}

M.ns = vim.api.nvim_create_namespace('agentls_review')

-- The keys, buffer-local while a proposal waits in the buffer (setup's `review_keys`).
M.keys = {
  next = ']h', -- the next hunk
  prev = '[h', -- the previous hunk
  accept = '<localleader>y', -- keep the hunk under the cursor
  reject = '<localleader>n', -- drop the hunk under the cursor
  accept_all = '<localleader>Y', -- keep every hunk not decided yet
  reject_all = '<localleader>N', -- drop every hunk not decided yet
}

local reviews = {} -- requestId -> review
local order = {} -- requestIds, oldest first

-- The one document a proposal's WorkspaceEdit changes, with its TextEdits; nil when it creates,
-- renames or deletes a file, changes several documents or has no edits (decided as a whole).
local function one_document(edit)
  if type(edit) ~= 'table' then
    return nil
  end
  local found = {}
  if type(edit.documentChanges) == 'table' then
    for _, change in ipairs(edit.documentChanges) do
      if type(change) ~= 'table' or change.kind ~= nil or type(change.textDocument) ~= 'table' then
        return nil
      end
      table.insert(found, { uri = change.textDocument.uri, document = change.textDocument,
        edits = change.edits })
    end
  end
  if type(edit.changes) == 'table' then
    for uri, edits in pairs(edit.changes) do
      table.insert(found, { uri = uri, edits = edits })
    end
  end
  if #found ~= 1 or type(found[1].edits) ~= 'table' or #found[1].edits == 0 then
    return nil
  end
  return found[1]
end

-- A hunk: the lines its TextEdit removes (from `start`, `removed` of them) and those it adds.
local function hunk_of(text_edit)
  local first, last = text_edit.range.start, text_edit.range['end']
  local added = vim.split(text_edit.newText or '', '\n', { plain = true })
  if added[#added] == '' then
    table.remove(added)
  end
  return {
    edit = text_edit,
    start = first.line,
    removed = last.line - first.line + (last.character > 0 and 1 or 0),
    added = added,
    state = 'undecided', -- or 'accepted', 'rejected'
  }
end

-- Where a hunk is now: its anchor mark follows the buffer's own edits.
local function row_of(review, hunk)
  local pos = vim.api.nvim_buf_get_extmark_by_id(review.bufnr, M.ns, hunk.anchor, {})
  return pos[1] or hunk.start
end

local function undraw(review, hunk)
  for _, id in ipairs(hunk.marks or {}) do
    pcall(vim.api.nvim_buf_del_extmark, review.bufnr, M.ns, id)
  end
  hunk.marks = {}
end

local LABELS = { undecided = 'waiting', accepted = 'keep', rejected = 'drop' }

local function draw(review, hunk, index)
  undraw(review, hunk)
  local buf = review.bufnr
  local count = vim.api.nvim_buf_line_count(buf)
  local row = math.min(row_of(review, hunk), count - 1)
  local function mark(at, opts)
    local ok, id = pcall(vim.api.nvim_buf_set_extmark, buf, M.ns, at, 0, opts)
    if ok then
      table.insert(hunk.marks, id)
    end
  end
  local label = ('agentls hunk %d/%d: %s'):format(index, #review.hunks, LABELS[hunk.state])
  mark(row, {
    virt_text = { { label, hunk.state == 'accepted' and 'DiffAdd' or 'Comment' } },
    virt_text_pos = 'eol',
  })
  if hunk.state == 'rejected' then
    return
  end
  if hunk.removed > 0 then
    local last = math.min(row + hunk.removed - 1, count - 1)
    local text = vim.api.nvim_buf_get_lines(buf, last, last + 1, false)[1] or ''
    mark(row, { end_row = last, end_col = #text, hl_group = 'DiffDelete', hl_eol = true })
    row = last
  end
  if #hunk.added > 0 then
    local lines = {}
    for _, text in ipairs(hunk.added) do
      table.insert(lines, { { text, 'DiffAdd' } })
    end
    -- Added lines go below the removed ones; an insertion goes above the line it precedes
    -- (below the last line at the end of the file).
    local above = hunk.removed == 0 and hunk.start < count
    mark(row, { virt_lines = lines, virt_lines_above = above })
  end
end

local function redraw(review)
  for i, hunk in ipairs(review.hunks) do
    draw(review, hunk, i)
  end
end

-- Every waiting hunk of a buffer, by its first line: { review, hunk, first, last } (0-based
-- rows; an insertion's are the line it is drawn at).
local function hunks_in(buf)
  local found = {}
  for _, id in ipairs(order) do
    local review = reviews[id]
    if review.bufnr == buf then
      for _, hunk in ipairs(review.hunks) do
        local first = row_of(review, hunk)
        table.insert(found, { review = review, hunk = hunk, first = first,
          last = first + math.max(hunk.removed, 1) - 1 })
      end
    end
  end
  table.sort(found, function(a, b) return a.first < b.first end)
  return found
end

local function at_cursor(buf)
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  for _, found in ipairs(hunks_in(buf)) do
    if row >= found.first and row <= found.last then
      return found
    end
  end
  return nil
end

local function unmap(buf)
  for _, lhs in pairs(M.keys) do
    pcall(vim.keymap.del, 'n', lhs, { buffer = buf })
  end
end

-- Ends a review without answering (answered as a whole, elsewhere, or expired).
function M.finish(request_id)
  local review = reviews[request_id]
  if review == nil then
    return
  end
  reviews[request_id] = nil
  order = vim.tbl_filter(function(id) return id ~= request_id end, order)
  if vim.api.nvim_buf_is_valid(review.bufnr) then
    for _, hunk in ipairs(review.hunks) do
      undraw(review, hunk)
      pcall(vim.api.nvim_buf_del_extmark, review.bufnr, M.ns, hunk.anchor)
    end
    if #hunks_in(review.bufnr) == 0 then
      unmap(review.bufnr)
    end
  end
end

-- Every hunk decided: the kept ones go back as agent/approve's `edit`.
local function send(review)
  local kept = {}
  for _, hunk in ipairs(review.hunks) do
    if hunk.state == 'accepted' then
      table.insert(kept, hunk.edit)
    end
  end
  local total = #review.hunks
  M.finish(review.request_id)
  local said = ('%d of %d hunks kept'):format(#kept, total)
  if #kept == 0 then
    return review.answer('reject', nil, 'Reject (' .. said .. ')')
  end
  if #kept == total then
    return review.answer('once', nil, 'Allow once (' .. said .. ')')
  end
  local edit
  if review.document ~= nil then
    edit = { documentChanges = { { textDocument = review.document, edits = kept } } }
  else
    edit = { changes = { [review.uri] = kept } }
  end
  review.answer('once', edit, said)
end

local function decided(review)
  for _, hunk in ipairs(review.hunks) do
    if hunk.state == 'undecided' then
      return false
    end
  end
  return true
end

-- Keep ('accepted') or drop ('rejected') the hunk under the cursor.
function M.decide(state)
  local found = at_cursor(vim.api.nvim_get_current_buf())
  if found == nil then
    vim.notify('agentls: no proposed hunk here (' .. M.keys.next .. ' goes to the next one)',
      vim.log.levels.WARN)
    return
  end
  found.hunk.state = state
  redraw(found.review)
  if decided(found.review) then
    send(found.review)
  end
end

-- Keep or drop every hunk not decided yet, of the proposal under the cursor (else the buffer's
-- first), and answer.
function M.decide_rest(state)
  local buf = vim.api.nvim_get_current_buf()
  local found = at_cursor(buf) or hunks_in(buf)[1]
  if found == nil then
    return
  end
  for _, hunk in ipairs(found.review.hunks) do
    if hunk.state == 'undecided' then
      hunk.state = state
    end
  end
  send(found.review)
end

-- Moves the cursor to the next (1) or previous (-1) hunk, wrapping around.
function M.jump(direction)
  local all = hunks_in(vim.api.nvim_get_current_buf())
  if #all == 0 then
    return
  end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local target = direction > 0 and all[1] or all[#all]
  for i = 1, #all do
    local found = direction > 0 and all[i] or all[#all + 1 - i]
    if (direction > 0 and found.first > row) or (direction < 0 and found.first < row) then
      target = found
      break
    end
  end
  vim.api.nvim_win_set_cursor(0, { target.first + 1, 0 })
end

local function map(buf)
  local function set(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
  end
  set(M.keys.next, function() M.jump(1) end, 'agentls: next proposed hunk')
  set(M.keys.prev, function() M.jump(-1) end, 'agentls: previous proposed hunk')
  set(M.keys.accept, function() M.decide('accepted') end, 'agentls: keep this hunk')
  set(M.keys.reject, function() M.decide('rejected') end, 'agentls: drop this hunk')
  set(M.keys.accept_all, function() M.decide_rest('accepted') end, 'agentls: keep the rest')
  set(M.keys.reject_all, function() M.decide_rest('rejected') end, 'agentls: drop the rest')
end

-- What the keys do, for the transcript.
function M.help()
  local k = M.keys
  return ('%s/%s move, %s keep, %s drop, %s keep the rest, %s drop the rest'):format(
    k.next, k.prev, k.accept, k.reject, k.accept_all, k.reject_all)
end

-- The buffer a permission-request's edit could be reviewed in (one existing document with hunks),
-- else nil.
function M.target(event)
  local document = one_document(event.edit)
  if document == nil or type(document.uri) ~= 'string' then
    return nil
  end
  -- A new file (or one gone since) is decided as a whole: loading its buffer would open it.
  local bufnr = vim.uri_to_bufnr(document.uri)
  if not vim.api.nvim_buf_is_loaded(bufnr)
    and (vim.uv or vim.loop).fs_stat(vim.uri_to_fname(document.uri)) == nil then
    return nil
  end
  return bufnr
end

-- Draws a permission-request's proposal in its (loaded) buffer and maps the keys there. `answer`
-- (decision, edit or nil, what to say) sends agent/approve once every hunk is decided. Returns
-- false when the proposal cannot be reviewed hunk by hunk.
function M.start(event, bufnr, answer)
  local document = one_document(event.edit)
  if document == nil or not vim.api.nvim_buf_is_loaded(bufnr) then
    return false
  end
  local review = {
    request_id = event.requestId,
    bufnr = bufnr,
    uri = document.uri,
    document = document.document,
    answer = answer,
    hunks = {},
  }
  M.finish(event.requestId)
  local count = vim.api.nvim_buf_line_count(bufnr)
  for _, text_edit in ipairs(document.edits) do
    local hunk = hunk_of(text_edit)
    hunk.anchor = vim.api.nvim_buf_set_extmark(bufnr, M.ns, math.min(hunk.start, count - 1), 0, {})
    table.insert(review.hunks, hunk)
  end
  reviews[event.requestId] = review
  table.insert(order, event.requestId)
  redraw(review)
  map(bufnr)
  return true
end

-- Shows a waiting proposal's buffer (in a window that is not the transcript) at its first
-- undecided hunk; the oldest waiting proposal when no request id is given.
function M.focus(request_id, transcript)
  local review = reviews[request_id or order[1]]
  if review == nil then
    vim.notify('agentls: no proposal waits for review', vim.log.levels.INFO)
    return
  end
  local win = vim.fn.bufwinid(review.bufnr)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    if vim.api.nvim_get_current_buf() == transcript then
      vim.cmd('wincmd p')
    end
    vim.api.nvim_win_set_buf(0, review.bufnr)
  end
  for _, hunk in ipairs(review.hunks) do
    if hunk.state == 'undecided' then
      vim.api.nvim_win_set_cursor(0, { row_of(review, hunk) + 1, 0 })
      return
    end
  end
end

-- The waiting hunks of a buffer (for a statusline or a test): { start, removed, added, state }.
function M.hunks(buf)
  return vim.tbl_map(function(found)
    return { start = found.first, removed = found.hunk.removed, added = found.hunk.added,
      state = found.hunk.state }
  end, hunks_in(buf))
end

return M
