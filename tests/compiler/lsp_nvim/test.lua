-- Neovim's own LSP client against dagc --lsp (run by ../lsp_nvim.py),
-- started by the editor set-up grammar/editors/nvim/ftplugin/dag.lua:
-- opens main.dag of a two-file project, waits for its diagnostics, jumps
-- to a definition in the imported file, hovers, renames a resource across
-- both files. Writes "ok" or the failures to $LSP_NVIM_OUT and quits.
local out = os.getenv('LSP_NVIM_OUT')
local dagc = os.getenv('DAGC')
local dir = os.getenv('LSP_NVIM_DIR')
local fails = {}
local function check(cond, what) if not cond then table.insert(fails, what) end end
local function finish()
  local f = io.open(out, 'w')
  f:write(#fails == 0 and 'ok\n' or table.concat(fails, '\n') .. '\n')
  f:close()
  vim.cmd('qa!')
end
local ok, err = pcall(function()
  -- the editor files as installed: ftdetect (vim/) and the LSP set-up (nvim/)
  local editors = os.getenv('LSP_NVIM_EDITORS')
  vim.opt.runtimepath:append(editors .. '/vim')
  vim.opt.runtimepath:append(editors .. '/nvim')
  vim.g.dagc_lsp_cmd = { dagc, '--lsp' }
  vim.cmd('filetype plugin on')
  vim.cmd('edit ' .. dir .. '/main.dag')
  local main = vim.api.nvim_get_current_buf()
  check(vim.bo.filetype == 'dag', 'filetype dag: ' .. vim.bo.filetype)
  local id
  check(vim.wait(10000, function() id = next(vim.lsp.buf_get_clients(main)); return id ~= nil end, 50),
        'grammar/editors/nvim/ftplugin/dag.lua started the client')
  -- diagnostics as one types: the file has one unknown name
  check(vim.wait(10000, function() return #vim.diagnostic.get(main) > 0 end, 50), 'diagnostics arrived')
  local d = vim.diagnostic.get(main)
  check(#d == 1 and d[1].message:find("unknown name 'inptu'", 1, true) ~= nil,
        'the diagnostic: ' .. vim.inspect(d))
  -- a fix: the diagnostics go away
  vim.api.nvim_buf_set_lines(main, 3, 4, false, { '    task phys after input, prev render run physics;' })
  check(vim.wait(10000, function() return #vim.diagnostic.get(main) == 0 end, 50), 'diagnostics cleared after the edit')
  -- hover on `render`: what it waits for
  local function params(line, col)
    return { textDocument = { uri = vim.uri_from_bufnr(main) }, position = { line = line, character = col } }
  end
  local r = vim.lsp.buf_request_sync(main, 'textDocument/hover', params(6, 11), 5000)
  local text = r and r[id] and r[id].result and r[id].result.contents.value or ''
  check(text:find('waits for: `done`', 1, true) ~= nil, 'hover: ' .. text)
  -- go to definition: `physics` in `run physics` is in b.dag
  vim.api.nvim_win_set_cursor(0, { 4, 44 })
  vim.lsp.buf.definition()
  check(vim.wait(10000, function() return vim.api.nvim_buf_get_name(0):match('b%.dag$') ~= nil end, 50),
        'definition jumped to b.dag, now in ' .. vim.api.nvim_buf_get_name(0))
  check(vim.api.nvim_win_get_cursor(0)[1] == 2, 'definition on line 2 of b.dag: ' .. vim.inspect(vim.api.nvim_win_get_cursor(0)))
  -- rename the resource `bodies` from main.dag: both files change
  vim.cmd('buffer ' .. main)
  vim.api.nvim_win_set_cursor(0, { 7, 42 })
  vim.lsp.buf.rename('rigid')
  local function has(buf, s)
    return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'):find(s, 1, true) ~= nil
  end
  check(vim.wait(10000, function() return has(main, 'reads rigid') end, 50), 'rename changed main.dag')
  local b = vim.fn.bufnr(dir .. '/b.dag')
  check(b > 0 and has(b, 'resource rigid;') and has(b, 'writes rigid') and not has(b, 'bodies'),
        'rename changed b.dag: ' .. table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '|'))
end)
if not ok then table.insert(fails, 'error: ' .. tostring(err)) end
finish()
